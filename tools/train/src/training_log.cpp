#include "remat/train/training_log.hpp"

#include "remat/error.hpp"
#include "remat/report/line_chart.hpp"
#include "remat/report/output_file.hpp"

#include <chrono>
#include <cmath>
#include <ostream>
#include <sstream>

namespace remat::train {

namespace {

double now_seconds()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::ostream& null_stream()
{
    static std::ostream sink(nullptr);
    return sink;
}

report::progress_options progress_for(const training_log_options& o)
{
    if (o.iterations < 1)
        throw argument_error("a training log for " + std::to_string(o.iterations) +
                             " iterations (expected at least 1)");
    return {.label = o.label,
            .total = static_cast<std::uint64_t>(o.iterations),
            .value_name = "loss",
            .style = o.quiet ? report::progress_style::lines : o.style};
}

} // namespace

training_log::training_log(std::ostream& out, training_log_options options)
    : options_(std::move(options)), progress_(options_.quiet ? null_stream() : out, progress_for(options_)),
      start_(now_seconds())
{
    losses_.reserve(static_cast<std::size_t>(options_.iterations));
}

void training_log::record(std::int64_t iteration, double loss)
{
    losses_.push_back(loss);
    progress_.update(static_cast<std::uint64_t>(iteration), loss);
}

void training_log::finish()
{
    progress_.finish(losses_.empty() ? std::optional<double>{} : std::optional<double>{losses_.back()});
}

double training_log::elapsed_seconds() const
{
    return now_seconds() - start_;
}

void write_loss_curve(const std::filesystem::path& path, const std::vector<double>& losses,
                      const loss_curve_options& options)
{
    report::line_chart chart;
    chart.title = options.title;
    chart.subtitle = options.subtitle;
    chart.x = {.label = "iteration"};
    chart.y = {.label = "loss", .kind = report::scale::log};
    report::data_series s{.name = options.series};
    for (std::size_t i = 0; i < losses.size(); ++i) {
        if (!(std::isfinite(losses[i]) && losses[i] > 0)) {
            std::ostringstream m;
            m << "loss curve: the loss of iteration " << i + 1 << " is " << losses[i]
              << " (a log scale needs finite values > 0)";
            throw argument_error(m.str());
        }
        s.points.push_back({static_cast<double>(i + 1), losses[i]});
    }
    chart.series.push_back(std::move(s));
    report::write_file_safely(path, [&](std::ostream& out) { report::write_svg(out, chart); });
}

std::optional<std::string> divergence(const std::vector<double>& losses, double final_loss)
{
    auto text = [](double v) {
        std::ostringstream s;
        s << v;
        return s.str();
    };
    for (std::size_t i = 0; i < losses.size(); ++i)
        if (!std::isfinite(losses[i]))
            return "training diverged: the loss is " + text(losses[i]) + " at iteration " + std::to_string(i + 1);
    if (!std::isfinite(final_loss))
        return "training diverged: the final loss is " + text(final_loss);
    if (!losses.empty() && losses.front() >= 0 && final_loss > divergence_factor * losses.front())
        return "training diverged: the loss went from " + text(losses.front()) + " to " + text(final_loss) + " (" +
               text(final_loss / losses.front()) + "x; over " + text(divergence_factor) +
               "x is divergence); try a smaller --learning-rate";
    return std::nullopt;
}

} // namespace remat::train
