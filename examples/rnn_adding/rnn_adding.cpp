// rnn_adding — trains a GRU or LSTM on the adding problem (Hochreiter & Schmidhuber 1997) with
// back-propagation through time under remat's checkpointing: sequences of 10^3 to 10^5 steps in the
// memory of a few dozen hidden states, with gradients bit-identical to keeping every state.
//
//     build/examples/rnn_adding                          # T = 1000, GRU, binomial schedule, 2 sqrt(T) slots
//     build/examples/rnn_adding --steps 100000 --budget 4MiB --iterations 20 --format json
//     build/examples/rnn_adding --cell lstm --schedule uniform --svg loss.svg
//
// Shows progress on stderr, draws the loss curve (--svg), and reports as text or JSON (--format json).
// Exit status: 0 when trained (target reached, or the run ended as asked), 2 on bad usage, 1 on failure.
#include "training.hpp"

#include "remat/cli/parse.hpp"
#include "remat/error.hpp"
#include "remat/report/json.hpp"
#include "remat/train/training_log.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <utility>

using namespace remat;

namespace {

struct command_line {
    examples::training_options training;
    std::string device = "cpu";
    std::string format = "text";
    std::string svg;
    std::string budget;
    bool quiet = false;
};

nlohmann::ordered_json to_json(const command_line& c, const examples::training_result& r)
{
    const examples::training_options& o = c.training;
    nlohmann::ordered_json j;
    j["problem"] = "adding";
    j["sequence_length"] = o.steps;
    j["batch"] = o.batch;
    j["cell"] = rnn::name(o.cell);
    j["hidden"] = o.hidden;
    j["layers"] = o.layers;
    j["dropout"] = o.dropout;
    j["precision"] = o.float64 ? "float64" : "float32";
    j["device"] = c.device;
    j["blas"] = r.blas;
    j["schedule"] = o.schedule;
    j["store"] = o.store;
    j["slots"] = r.slots;
    j["learning_rate"] = o.learning_rate;
    j["target_loss"] = o.target_loss;
    j["reached_target"] = r.reached_target;
    j["initial_loss"] = r.losses.empty() ? 0.0 : r.losses.front();
    j["final_loss"] = r.final_loss;
    j["iterations"] = r.iterations;
    j["seconds"] = r.seconds;
    j["forward_steps"] = r.forward_steps;
    j["state_bytes"] = r.state_bytes;
    j["peak_snapshot_bytes"] = r.peak_snapshot_bytes;
    j["taped_steps"] = r.taped_steps;
    j["peak_tape_bytes"] = r.peak_tape_bytes;
    j["store_all_bytes"] = r.store_all_bytes;
    j["plain_bptt_bytes"] = r.plain_bptt_bytes;
    if (r.bit_identical)
        j["bit_identical_vs_store_all"] = *r.bit_identical;
    else
        j["bit_identical_vs_store_all"] = nullptr; // store-all would need more than 1 GiB: not compared
    j["losses"] = r.losses;
    nlohmann::ordered_json held = nlohmann::ordered_json::array();
    for (const auto& [it, loss] : r.held_out)
        held.push_back({{"iteration", it}, {"loss", loss}});
    j["held_out"] = held;
    if (!c.svg.empty())
        j["svg"] = c.svg;
    return j;
}

void write_loss_curve(const command_line& c, const examples::training_result& r)
{
    train::write_loss_curve(
        c.svg, r.losses,
        {.title = "adding problem, T = " + std::to_string(c.training.steps) + ": mean squared error",
         .subtitle = std::string(rnn::name(c.training.cell)) + " " + std::to_string(c.training.hidden) + ", batch " +
                     std::to_string(c.training.batch) + ", " + c.training.schedule + " with " +
                     std::to_string(r.slots) + " slots, " + std::to_string(r.forward_steps) +
                     " forward steps per gradient; held-out " + std::to_string(r.final_loss),
         .series = "training batch"});
}

void print_text(const command_line& c, const examples::training_result& r)
{
    const examples::training_options& o = c.training;
    std::printf("adding problem, T = %lld, batch %lld: %s with %lld hidden units, %s\n",
                static_cast<long long>(o.steps), static_cast<long long>(o.batch), rnn::name(o.cell),
                static_cast<long long>(o.hidden), r.blas.c_str());
    std::printf("mean squared error %.4g -> %.4g (held out) in %lld iterations, %.1f s: target %g %s\n",
                r.losses.empty() ? 0.0 : r.losses.front(), r.final_loss, static_cast<long long>(r.iterations),
                r.seconds, o.target_loss, r.reached_target ? "reached" : "NOT reached");
    std::printf(
        "%s schedule, %lld slots: %llu forward steps per gradient, snapshots %s (store-all %s, plain BPTT %s)\n",
        o.schedule.c_str(), static_cast<long long>(r.slots), static_cast<unsigned long long>(r.forward_steps),
        cli::format_bytes(r.peak_snapshot_bytes).c_str(), cli::format_bytes(r.store_all_bytes).c_str(),
        cli::format_bytes(r.plain_bptt_bytes).c_str());
    if (r.taped_steps > 0)
        std::printf("%llu taped steps per gradient, tapes %s at most (%s a step)\n",
                    static_cast<unsigned long long>(r.taped_steps), cli::format_bytes(r.peak_tape_bytes).c_str(),
                    cli::format_bytes(r.tape_bytes).c_str());
    std::printf("gradient bit-identical to store-all: %s\n",
                r.bit_identical ? (*r.bit_identical ? "yes" : "NO") : "not compared (store-all needs > 1 GiB)");
}

} // namespace

int main(int argc, char** argv)
{
    command_line c;
    examples::training_options& o = c.training;
    std::string cell = "gru";
    CLI::App app{"Trains a GRU or LSTM on the adding problem with checkpointed back-propagation through time",
                 "rnn_adding"};
    app.add_option("--steps", o.steps, "sequence length T (10^3 .. 10^5 and more)")->capture_default_str();
    app.add_option("--batch", o.batch, "sequences per iteration")->capture_default_str();
    app.add_option("--hidden", o.hidden, "hidden units per layer")->capture_default_str();
    app.add_option("--layers", o.layers, "stacked recurrent layers")->capture_default_str();
    app.add_option("--cell", cell, "gru or lstm")->capture_default_str();
    app.add_option("--dropout", o.dropout, "dropout between layers (recomputed exactly)")->capture_default_str();
    app.add_option("--iterations", o.iterations, "at most this many updates")->capture_default_str();
    app.add_option("--learning-rate", o.learning_rate, "Adam's learning rate")->capture_default_str();
    app.add_option("--clip", o.clip, "gradient norm clipping (0: none)")->capture_default_str();
    app.add_option("--target-loss", o.target_loss, "stop when a held-out batch scores below this")
        ->capture_default_str();
    app.add_option("--time-limit", o.time_limit, "stop after this many seconds (0: no limit)")->capture_default_str();
    app.add_option("--schedule", o.schedule,
                   "revolve, uniform, store-all, taped (remat::taped_revolve: steps' tapes kept where they pay) or "
                   "checkpoint-sequential (PyTorch's plan: segment inputs, each segment re-run with tapes)")
        ->capture_default_str();
    auto* slots = app.add_option("--slots", o.slots,
                                 "snapshot slots (default: 2 sqrt(T), or what --budget buys); taped schedules share "
                                 "them, in states, between snapshots and tapes");
    // Both given, the budget won in silence.
    app.add_option("--budget", c.budget, "snapshot memory, e.g. 4MiB (instead of --slots)")->excludes(slots);
    app.add_option("--store", o.store, "host or device (GPU memory under --device cuda)")->capture_default_str();
    app.add_option("--device", c.device, "cpu or cuda")->capture_default_str();
    app.add_flag("--float64", o.float64, "double precision (default: float)");
    app.add_option("--seed", o.seed, "random seed (weights, data, dropout), a whole number >= 0")
        ->capture_default_str()
        ->check([](const std::string& v) { // CLI11 would wrap -1 into 2^64 - 1
            return !v.empty() && v.front() == '-' ? "wants a whole number >= 0, got " + v : std::string();
        });
    app.add_option("--svg", c.svg, "write the loss curve here");
    app.add_option("--format", c.format, "text or json")->capture_default_str();
    app.add_flag("--quiet", c.quiet, "no progress on stderr");
    try {
        app.parse(argc, argv);
        o.cell = rnn::parse_cell(cell);
        if (!c.budget.empty())
            o.budget = *cli::parse_bytes("--budget", c.budget);
        if (c.format != "text" && c.format != "json")
            throw argument_error("format '" + c.format + "' (expected text or json)");
        if (c.device != "cpu" && c.device != "cuda")
            throw argument_error("device '" + c.device + "' (expected cpu or cuda)");
        // 0 is "not given" inside: --slots 0 took the default in silence.
        if ((slots->count() > 0 && o.slots < 1) || o.batch < 1 || o.hidden < 1 || o.iterations < 1)
            throw argument_error("--slots, --batch, --hidden and --iterations must be positive");
        // A negative or NaN value turned clipping, the time limit or the early stop off in silence.
        for (const auto& [name, value] : {std::pair{"--clip", o.clip}, std::pair{"--time-limit", o.time_limit},
                                          std::pair{"--target-loss", o.target_loss}})
            if (!(std::isfinite(value) && value >= 0))
                throw argument_error(std::string(name) + " wants a finite number >= 0, got " +
                                     app.get_option(name)->as<std::string>());
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0)
            return app.exit(e);
        std::fprintf(stderr, "rnn_adding: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rnn_adding: %s\n", e.what());
        return 2;
    }
    try {
        train::training_log log(std::cerr, {.label = "training", .iterations = o.iterations, .quiet = c.quiet});
        auto progress = [&](std::int64_t it, double loss) { log.record(it, loss); };
        const examples::training_result r =
            c.device == "cuda" ? examples::train_on_cuda(o, progress) : examples::train_on_cpu(o, progress);
        log.finish();
        if (!c.svg.empty())
            write_loss_curve(c, r);
        const std::optional<std::string> diverged = train::divergence(r.losses, r.final_loss);
        if (c.format == "json") {
            nlohmann::ordered_json j = to_json(c, r);
            j["diverged"] = diverged.has_value();
            report::write_json(std::cout, j);
        } else
            print_text(c, r);
        if (diverged) {
            std::fprintf(stderr, "rnn_adding: %s\n", diverged->c_str());
            return 1;
        }
        return 0;
    } catch (const argument_error& e) {
        std::fprintf(stderr, "rnn_adding: %s\n", e.what());
        return 2;
    } catch (const capacity_error& e) {
        std::fprintf(stderr, "rnn_adding: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rnn_adding: %s\n", e.what());
        return 1;
    }
}
