// A store the snippet's schedule runs on (its slot count does not matter to the compiler).
remat::host_store store(64);
