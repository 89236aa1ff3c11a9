// The pinned memory resource the page's earlier snippet made.
remat::cuda::pinned_memory_resource pinned;
