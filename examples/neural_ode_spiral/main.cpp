// Example: a neural ODE learns the spiral dy/dt = A y^3 (Chen et al. 2018) from data it generates, with
// exact gradients of the discrete solve through remat's checkpointing: every gradient integrates the
// whole horizon (1000 RK4 steps by default) and runs its adjoint within a snapshot budget.
//
//     build/examples/neural_ode_spiral                                  # defaults: revolve, 50 slots, CPU
//     build/examples/neural_ode_spiral --budget 4KiB --store disk --format json
//     build/examples/neural_ode_spiral --device cuda --store device --schedule uniform --slots 64
//
// It shows progress (a bar on a terminal, lines otherwise), writes spiral_loss.svg and
// spiral_trajectories.svg (into --output-dir), and ends with a report (text or --format json).
// Exit status: 0, 1 when training fails (non-finite numbers, a loss that ends over 100x above its start, a
// budget smaller than one state, a CUDA error, an unwritable file), 2 for bad options; one line on stderr
// says why.
#include "spiral_data.hpp"
#include "spiral_training.hpp"

#include "remat/cli/parse.hpp"

#include "remat/error.hpp"
#include "remat/report/json.hpp"
#include "remat/report/line_chart.hpp"
#include "remat/report/output_file.hpp"
#include "remat/train/training_log.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <system_error>

namespace {

using namespace remat;
using namespace remat::examples;

const std::map<std::string, spiral_schedule> schedules{{"revolve", spiral_schedule::revolve},
                                                       {"uniform", spiral_schedule::uniform},
                                                       {"store-all", spiral_schedule::store_all}};
const std::map<std::string, spiral_store> stores{
    {"device", spiral_store::device}, {"host", spiral_store::host}, {"disk", spiral_store::disk}};

struct usage : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct options {
    spiral_config config;
    std::string schedule = "revolve";
    std::string store = "host";
    std::string device = "cpu";
    std::string budget;
    std::string hidden = "16";
    std::string activation = "tanh";
    std::string format = "text";
    std::filesystem::path output_dir = ".";
};

// A finite number > 0 (or >= 0). CLI11's PositiveNumber let NaN through (--horizon nan trained on NaN
// weights, --learning-rate nan failed only once training had started) and named infinity's range as 0 to
// the largest double written out in 309 digits.
CLI::Validator finite_number(bool zero_allowed)
{
    return CLI::Validator(
        [zero_allowed](const std::string& text) {
            double v = 0;
            const bool parsed = CLI::detail::lexical_cast(text, v);
            if (parsed && std::isfinite(v) && (v > 0 || (zero_allowed && v == 0)))
                return std::string();
            return std::string("wants a finite number ") + (zero_allowed ? ">= 0" : "> 0") + ", got " + text;
        },
        zero_allowed ? "NONNEGATIVE" : "POSITIVE"); // as CLI11 names them in --help
}

std::vector<std::int64_t> parse_widths(const std::string& text)
{
    std::vector<std::int64_t> widths;
    std::stringstream s(text);
    std::string item;
    while (std::getline(s, item, ','))
        widths.push_back(cli::parse_count("--hidden", item, 1, 1 << 16));
    if (widths.empty())
        throw usage("--hidden '" + text + "' (expected widths such as 32,32)");
    return widths;
}

void write_trajectories(const std::filesystem::path& path, const spiral_data& data, const spiral_result& r,
                        const std::string& subtitle)
{
    report::line_chart chart;
    chart.title = "spiral dy/dt = A y³: true and learned trajectories from y(0) = (2, 0)";
    chart.subtitle = subtitle;
    chart.x = {.label = "y₁"};
    chart.y = {.label = "y₂"};
    report::data_series truth{.name = "true"};
    report::data_series learned{.name = "learned", .dashed = true};
    for (std::int64_t k = 0; k <= data.steps; ++k) {
        const auto d = data.at(k);
        truth.points.push_back({d[0], d[1]});
        learned.points.push_back(
            {r.learned[static_cast<std::size_t>(2 * k)], r.learned[static_cast<std::size_t>(2 * k + 1)]});
    }
    chart.series = {truth, learned};
    report::write_file_safely(path, [&](std::ostream& out) { report::write_svg(out, chart); });
}

int run_training(const options& o)
{
    const spiral_config& c = o.config;
    const spiral_data data = make_spiral_data(c.steps);
    const bool json = o.format == "json";
    train::training_log log(std::cerr, {.label = "training", .iterations = c.iterations});
    const spiral_progress progress = [&](std::int64_t i, double loss) { log.record(i, loss); };
    std::error_code ec;
    std::filesystem::create_directories(o.output_dir, ec); // a failure shows when the files are written
    spiral_result r;
    r = o.device == "cuda" ? train_spiral_on_cuda(c, data, progress) : train_spiral_on_cpu(c, data, progress);
    log.finish();
    const double seconds = log.elapsed_seconds();
    if (c.store == spiral_store::disk)
        std::filesystem::remove(c.disk_file, ec); // scratch snapshots, complete or not
    const std::string setup = c.method + ", " + std::to_string(c.steps) + " steps, " + o.schedule + " with " +
                              std::to_string(r.slots) + " slots on " + o.store + " (" + o.device + ")";
    const std::filesystem::path loss_svg = o.output_dir / "spiral_loss.svg";
    const std::filesystem::path trajectories_svg = o.output_dir / "spiral_trajectories.svg";
    train::write_loss_curve(loss_svg, r.losses, {.title = "spiral: training loss", .subtitle = setup});
    write_trajectories(trajectories_svg, data, r, setup);

    const double initial = r.losses.front();
    const std::optional<std::string> diverged = train::divergence(r.losses, r.final_loss);
    if (json) {
        nlohmann::ordered_json j{{"initial_loss", initial},
                                 {"final_loss", r.final_loss},
                                 {"diverged", diverged.has_value()},
                                 {"loss_reduction", initial / r.final_loss},
                                 {"iterations", c.iterations},
                                 {"seconds", seconds},
                                 {"steps", c.steps},
                                 {"method", c.method},
                                 {"schedule", o.schedule},
                                 {"store", o.store},
                                 {"device", o.device},
                                 {"slots", r.slots},
                                 {"state_bytes", r.state_bytes},
                                 {"forward_steps", r.forward_steps},
                                 {"peak_snapshot_bytes", r.peak_snapshot_bytes},
                                 {"store_all_bytes", r.store_all_bytes},
                                 {"grad_check_rel_err", r.grad_check_rel_err},
                                 {"bit_identical_vs_store_all", r.bit_identical_vs_store_all},
                                 {"loss_svg", loss_svg.string()},
                                 {"trajectories_svg", trajectories_svg.string()}};
        report::write_json(std::cout, j);
    } else {
        std::printf("neural ODE spiral: %s\n", setup.c_str());
        std::printf("loss %.4g -> %.4g (%.0fx lower) in %lld iterations, %.1f s\n", initial, r.final_loss,
                    initial / r.final_loss, static_cast<long long>(c.iterations), seconds);
        std::printf("per gradient: %llu forward steps for %lld steps; snapshots peak %s of store-all's %s\n",
                    static_cast<unsigned long long>(r.forward_steps), static_cast<long long>(c.steps),
                    cli::format_bytes(r.peak_snapshot_bytes).c_str(), cli::format_bytes(r.store_all_bytes).c_str());
        std::printf("gradient vs central differences: %.2e relative; bit-identical to store-all: %s\n",
                    r.grad_check_rel_err, r.bit_identical_vs_store_all ? "yes" : "NO");
        std::printf("wrote %s and %s\n", loss_svg.string().c_str(), trajectories_svg.string().c_str());
    }
    if (diverged) {
        std::cerr << "neural_ode_spiral: " << *diverged << '\n';
        return 1;
    }
    return r.bit_identical_vs_store_all ? 0 : 1;
}

} // namespace

int main(int argc, char** argv)
{
    options o;
    spiral_config& c = o.config;
    CLI::App app{"neural_ode_spiral: a neural ODE learns dy/dt = A y^3 with checkpointed exact gradients",
                 "neural_ode_spiral"};
    app.add_option("--iterations", c.iterations, "Adam updates")->capture_default_str()->check(CLI::Range(1, 1000000));
    app.add_option("--steps", c.steps, "solver steps over t in [0, 25] per gradient")
        ->capture_default_str()
        ->check(CLI::Range(2, 100000000));
    app.add_option("--starts", c.starts, "trajectories per batch, started at evenly spaced data points")
        ->capture_default_str()
        ->check(CLI::Range(1, 100000));
    auto* slots = app.add_option("--slots", c.slots,
                                 "snapshot slots, at most --steps - 1 (default 50: 5% of the states; with --schedule "
                                 "uniform the fewest it can run in, about 2 sqrt(--steps): 61 for 1000 steps)")
                      ->check(CLI::Range(1, 1000000000));
    app.add_option("--budget", o.budget, "snapshot bytes instead of --slots (4KiB, 1MiB, ...)")->excludes(slots);
    app.add_option("--schedule", o.schedule, "revolve, uniform or store-all")
        ->capture_default_str()
        ->check(CLI::IsMember({"revolve", "uniform", "store-all"}));
    app.add_option("--store", o.store, "where snapshots live: device, host or disk (HDF5)")
        ->capture_default_str()
        ->check(CLI::IsMember({"device", "host", "disk"}));
    app.add_option("--method", c.method, "Runge–Kutta method: euler, rk4 or dopri5")
        ->capture_default_str()
        ->check(CLI::IsMember({"euler", "rk4", "dopri5"}));
    app.add_option("--device", o.device, "cpu or cuda")->capture_default_str()->check(CLI::IsMember({"cpu", "cuda"}));
    app.add_option("--seed", c.seed, "seed of the initial weights (a whole number >= 0)")
        ->capture_default_str()
        ->check([](const std::string& v) { // CLI11 would wrap -1 into 2^64 - 1
            return !v.empty() && v.front() == '-' ? "wants a whole number >= 0, got " + v : std::string();
        });
    app.add_option("--hidden", o.hidden, "hidden layer widths")->capture_default_str();
    app.add_option("--activation", o.activation, "tanh or softplus")
        ->capture_default_str()
        ->check(CLI::IsMember({"tanh", "softplus"}));
    app.add_option("--learning-rate", c.learning_rate, "Adam's learning rate")
        ->capture_default_str()
        ->check(finite_number(false));
    app.add_option("--horizon", c.horizon, "the gradient's loss weights decay as exp(-tau / horizon) (0: none)")
        ->capture_default_str()
        ->check(finite_number(true));
    app.add_option("--output-dir", o.output_dir, "where the SVG files go")->capture_default_str();
    app.add_option("--format", o.format, "text or json")->capture_default_str()->check(CLI::IsMember({"text", "json"}));
    try {
        app.parse(argc, argv);
        if (!o.budget.empty())
            c.budget_bytes = cli::parse_bytes("--budget", o.budget).value();
        c.hidden = parse_widths(o.hidden);
        c.act = dense::parse_activation(o.activation);
        c.schedule = schedules.at(o.schedule);
        c.store = stores.at(o.store);
        c.disk_file = o.output_dir / "spiral_snapshots.h5";
        choose_default_slots(c, 50);
        if (const auto problem = slots_problem(c))
            throw usage(*problem);
        if (c.starts > c.steps)
            throw usage("--starts " + std::to_string(c.starts) + " exceeds --steps " + std::to_string(c.steps));
        if (o.device == "cuda" && !spiral_cuda_built())
            throw usage("--device cuda: this build has no CUDA back end (nvcc was not found when it was configured)");
    } catch (const CLI::CallForHelp&) {
        std::cout << app.help();
        return 0;
    } catch (const CLI::ParseError& e) {
        std::cerr << "neural_ode_spiral: " << e.what() << " (try --help)\n";
        return 2;
    } catch (const std::exception& e) { // usage, cli::usage_error, argument_error from the parsers
        std::cerr << "neural_ode_spiral: " << e.what() << '\n';
        return 2;
    }
    try {
        return run_training(o);
    } catch (const std::exception& e) {
        std::cerr << "neural_ode_spiral: " << e.what() << '\n';
        return 1;
    }
}
