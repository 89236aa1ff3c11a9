// bench/mpi_scaling — weak scaling of the heat example (examples/heat2d_mpi/heat2d.hpp) over MPI ranks, with
// its snapshots in RAM and on the parallel HDF5 level, and the parallel HDF5 level's throughput against
// per-rank raw files written and read in the same run.
//
//     build/bench/mpi_scaling [--ranks 1,2,4] [--nx 512] [--rows-per-rank 128] [--steps 200] [--slots 10]
//                             [--snapshots 8] [--repeats 3] [--dir DIR] [--format text|json]
//
// Run as a plain program, it starts `mpirun -np P` of itself for each P in --ranks and prints the table:
// time per step (forward and adjoint steps of the checkpointed gradient) with host snapshots and with the
// parallel HDF5 level, each against one rank's (weak scaling: each rank keeps rows-per-rank rows, so the
// work per rank is constant and the ideal ratio is 1), and the parallel HDF5 level's write and read
// bandwidth (all ranks, one shared file, collective, durable writes; reads with the page cache dropped)
// against every rank writing and reading its own raw file (pwrite + fdatasync, pread) in the same run.
// Medians of --repeats rounds, the order of the two I/O methods alternating.
#include "program_help.hpp"

#include "bench_util.hpp"
#include "heat2d_mpi/heat2d.hpp"
#include "remat/cli/parse.hpp"

#include <remat/mpi/mpi.hpp>
#include <remat/mpi/parallel_hdf5_store.hpp>
#include <remat/remat.hpp>
#include <remat/report/json.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace remat::examples;
using nlohmann::ordered_json;

struct options {
    std::vector<int> ranks{1, 2, 4};
    std::int64_t nx = 512;
    std::int64_t rows_per_rank = 128;
    remat::step_t steps = 200;
    remat::slot_t slots = 10;
    int snapshots = 8;
    int repeats = 3;
    std::filesystem::path dir = ".";
    bool json = false;
    bool worker = false;
};

options parse(int argc, char** argv)
{
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--worker") {
            o.worker = true;
            continue;
        }
        if (i + 1 >= argc)
            throw remat::cli::usage_error("option " + std::string(a) + " needs a value");
        const std::string_view v = argv[++i];
        if (a == "--ranks") {
            o.ranks.clear();
            std::size_t start = 0;
            while (start <= v.size()) {
                const std::size_t comma = std::min(v.find(',', start), v.size());
                o.ranks.push_back(
                    static_cast<int>(remat::cli::parse_count(a, v.substr(start, comma - start), 1, 4096)));
                start = comma + 1;
            }
        } else if (a == "--nx")
            o.nx = remat::cli::parse_count(a, v, 1, 1 << 20);
        else if (a == "--rows-per-rank")
            o.rows_per_rank = remat::cli::parse_count(a, v, 1, 1 << 20);
        else if (a == "--steps")
            o.steps = remat::cli::parse_count(a, v, 2);
        else if (a == "--slots")
            o.slots = remat::cli::parse_count(a, v, 1);
        else if (a == "--snapshots")
            o.snapshots = static_cast<int>(remat::cli::parse_count(a, v, 1, 1000));
        else if (a == "--repeats")
            o.repeats = static_cast<int>(remat::cli::parse_count(a, v, 1, 1000));
        else if (a == "--dir")
            o.dir = std::string(v);
        else if (a == "--format") {
            if (v != "text" && v != "json")
                throw remat::cli::usage_error("--format wants text or json, got '" + std::string(v) + "'");
            o.json = v == "json";
        } else
            throw remat::cli::usage_error("unknown option '" + std::string(a) + "'");
    }
    return o;
}

// The slowest rank's time: a collective phase ends when its last rank does.
double slowest(double seconds)
{
    double s = 0;
    remat::mpi::check(MPI_Allreduce(&seconds, &s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    return s;
}

template <class Body>
double timed(Body&& body)
{
    remat::mpi::check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    const auto start = std::chrono::steady_clock::now();
    body();
    return slowest(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

void drop_cache(const std::filesystem::path& file)
{
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        ::close(fd);
    }
}

// One rank's raw file: `count` snapshots of `bytes`, each pwritten and made durable, then read back.
struct raw_file {
    std::filesystem::path path;
    int fd = -1;
    explicit raw_file(std::filesystem::path p) : path(std::move(p))
    {
        fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
            throw std::runtime_error("cannot create " + path.string());
    }
    ~raw_file()
    {
        ::close(fd);
        std::filesystem::remove(path);
    }
    raw_file(const raw_file&) = delete;
    raw_file& operator=(const raw_file&) = delete;
    void write(int index, const std::vector<double>& v) const
    {
        const auto bytes = static_cast<off_t>(v.size() * sizeof(double));
        if (::pwrite(fd, v.data(), static_cast<std::size_t>(bytes), index * bytes) != bytes || ::fdatasync(fd) != 0)
            throw std::runtime_error("writing " + path.string() + " failed");
    }
    void read(int index, std::vector<double>& v) const
    {
        const auto bytes = static_cast<off_t>(v.size() * sizeof(double));
        if (::pread(fd, v.data(), static_cast<std::size_t>(bytes), index * bytes) != bytes)
            throw std::runtime_error("reading " + path.string() + " failed");
    }
};

int worker(const options& o)
{
    const int ranks = remat::mpi::size(MPI_COMM_WORLD);
    const int me = remat::mpi::rank(MPI_COMM_WORLD);
    heat2d::part part(MPI_COMM_WORLD, {.nx = o.nx, .ny = o.rows_per_rank * ranks});
    const std::uint64_t part_bytes = part.values() * sizeof(double);
    const std::filesystem::path file = o.dir / ("mpi_scaling_" + std::to_string(ranks) + ".h5");
    const remat::revolve plan(o.steps, o.slots);

    std::vector<double> host_s, disk_s, hdf5_w, hdf5_r, raw_w, raw_r;
    std::uint64_t forward_steps = 0;
    for (int round = 0; round < o.repeats; ++round) {
        remat::host_store ram(o.slots);
        host_s.push_back(
            timed([&] { forward_steps = heat2d::gradient(MPI_COMM_WORLD, part, plan, ram).report.forward_steps; }));
        {
            remat::mpi::parallel_hdf5_store disk(MPI_COMM_WORLD, file, o.slots, part_bytes);
            disk_s.push_back(timed([&] { (void)heat2d::gradient(MPI_COMM_WORLD, part, plan, disk); }));
        }
        // Throughput: the same snapshots through the parallel level and through per-rank raw files.
        std::vector<double> u = part.initial();
        std::vector<double> back(u.size());
        auto hdf5_round = [&] {
            remat::mpi::parallel_hdf5_store disk(MPI_COMM_WORLD, file, o.snapshots, part_bytes);
            hdf5_w.push_back(timed([&] {
                for (int i = 0; i < o.snapshots; ++i)
                    disk.write(i, i, remat::host_bytes(std::as_bytes(std::span(u))));
            }));
            remat::mpi::check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
            if (me == 0)
                drop_cache(file);
            hdf5_r.push_back(timed([&] {
                for (int i = 0; i < o.snapshots; ++i)
                    disk.read(i, i, remat::host_bytes(std::as_writable_bytes(std::span(back))));
            }));
        };
        auto raw_round = [&] {
            const raw_file raw(o.dir / ("mpi_scaling_raw_" + std::to_string(ranks) + "_" + std::to_string(me)));
            raw_w.push_back(timed([&] {
                for (int i = 0; i < o.snapshots; ++i)
                    raw.write(i, u);
            }));
            drop_cache(raw.path);
            raw_r.push_back(timed([&] {
                for (int i = 0; i < o.snapshots; ++i)
                    raw.read(i, back);
            }));
        };
        if (round % 2 == 0) {
            hdf5_round();
            raw_round();
        } else {
            raw_round();
            hdf5_round();
        }
    }
    if (me == 0)
        std::filesystem::remove(file);
    if (me != 0)
        return 0;
    const double steps = static_cast<double>(forward_steps) + static_cast<double>(o.steps); // + adjoint steps
    const double moved = static_cast<double>(o.snapshots) * static_cast<double>(part_bytes) * ranks;
    using remat::bench::median;
    ordered_json j;
    j["ranks"] = ranks;
    j["nx"] = o.nx;
    j["ny"] = o.rows_per_rank * ranks;
    j["steps"] = o.steps;
    j["slots"] = o.slots;
    j["forward_steps"] = forward_steps;
    j["rank_snapshot_bytes"] = part_bytes;
    j["host_seconds_per_step"] = median(host_s) / steps;
    j["hdf5_seconds_per_step"] = median(disk_s) / steps;
    j["hdf5_write_bytes_per_s"] = moved / median(hdf5_w);
    j["raw_write_bytes_per_s"] = moved / median(raw_w);
    j["hdf5_read_bytes_per_s"] = moved / median(hdf5_r);
    j["raw_read_bytes_per_s"] = moved / median(raw_r);
    std::cout << j.dump() << '\n';
    return 0;
}

std::string self_path()
{
    return std::filesystem::read_symlink("/proc/self/exe").string();
}

int driver(const options& o, int argc, char** argv)
{
    std::string args;
    for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]) != "--format")
            args += std::string(" '") + argv[i] + "'";
        else
            ++i;
    std::vector<ordered_json> rows;
    for (const int p : o.ranks) {
        // As root, mpirun wants its consent flag; more ranks than cores need --oversubscribe, and waiting ranks
        // must yield their core instead of polling for it.
        const std::string command = "mpirun -np " + std::to_string(p) + " --oversubscribe --mca mpi_yield_when_idle 1" +
                                    (geteuid() == 0 ? " --allow-run-as-root" : "") + " '" + self_path() + "' --worker" +
                                    args;
        if (!o.json)
            std::fprintf(stderr, "mpi_scaling: %s\n", command.c_str());
        FILE* pipe = ::popen(command.c_str(), "r");
        if (pipe == nullptr)
            throw std::runtime_error("cannot run " + command);
        std::string out;
        char buffer[4096];
        while (std::fgets(buffer, sizeof buffer, pipe) != nullptr)
            out += buffer;
        if (::pclose(pipe) != 0)
            throw std::runtime_error("failed: " + command);
        rows.push_back(ordered_json::parse(out));
    }
    const ordered_json& one = rows.front();
    for (ordered_json& r : rows) {
        r["host_step_vs_first"] = r["host_seconds_per_step"].get<double>() / one["host_seconds_per_step"].get<double>();
        r["hdf5_step_vs_first"] = r["hdf5_seconds_per_step"].get<double>() / one["hdf5_seconds_per_step"].get<double>();
        r["hdf5_write_vs_raw"] = r["hdf5_write_bytes_per_s"].get<double>() / r["raw_write_bytes_per_s"].get<double>();
        r["hdf5_read_vs_raw"] = r["hdf5_read_bytes_per_s"].get<double>() / r["raw_read_bytes_per_s"].get<double>();
    }
    if (o.json) {
        ordered_json j;
        j["runs"] = rows;
        remat::report::write_json(std::cout, j);
        return 0;
    }
    std::printf("weak scaling: %lld x %lld rows per rank, %lld steps, revolve with %lld slots, median of %d\n",
                static_cast<long long>(o.nx), static_cast<long long>(o.rows_per_rank), static_cast<long long>(o.steps),
                static_cast<long long>(o.slots), o.repeats);
    std::printf("ranks   host us/step  vs %d    hdf5 us/step  vs %d    hdf5 write  raw write   ratio   hdf5 read  raw "
                "read    ratio\n",
                o.ranks.front(), o.ranks.front());
    for (const ordered_json& r : rows)
        std::printf(
            "%5d   %12.1f  %5.2f   %12.1f  %5.2f   %7.0f MB/s %6.0f MB/s %5.0f%%  %6.0f MB/s %6.0f MB/s %5.0f%%\n",
            r["ranks"].get<int>(), r["host_seconds_per_step"].get<double>() * 1e6,
            r["host_step_vs_first"].get<double>(), r["hdf5_seconds_per_step"].get<double>() * 1e6,
            r["hdf5_step_vs_first"].get<double>(), r["hdf5_write_bytes_per_s"].get<double>() / 1e6,
            r["raw_write_bytes_per_s"].get<double>() / 1e6, r["hdf5_write_vs_raw"].get<double>() * 100,
            r["hdf5_read_bytes_per_s"].get<double>() / 1e6, r["raw_read_bytes_per_s"].get<double>() / 1e6,
            r["hdf5_read_vs_raw"].get<double>() * 100);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    if (remat::examples::answered_help(
            argc, argv,
            "usage: mpi_scaling [--ranks 1,2,4] [--nx 512] [--rows-per-rank 128] [--steps 200] [--slots 10]\n"
            "           [--snapshots 8] [--repeats 3] [--dir DIR] [--format text|json]\n"
            "bench/mpi_scaling \u2014 weak scaling of the heat example (examples/heat2d_mpi/heat2d.hpp) over MPI\n"
            "ranks, with its snapshots in RAM and on the parallel HDF5 level, and the parallel HDF5 level's\n"
            "throughput against per-rank raw files written and read in the same run.\n"))
        return 0;
    options o;
    try {
        o = parse(argc, argv);
    } catch (const remat::cli::usage_error& e) {
        std::fprintf(stderr, "mpi_scaling: %s\n", e.what());
        return 2;
    }
    if (!o.worker) {
        try {
            return driver(o, argc, argv);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "mpi_scaling: %s\n", e.what());
            return 1;
        }
    }
    MPI_Init(&argc, &argv);
    const int status = remat::mpi::abort_on_failure(MPI_COMM_WORLD, [&] { return worker(o); });
    MPI_Finalize();
    return status;
}
