// The storage level the page's earlier snippet made.
remat::host_store ram(4);
