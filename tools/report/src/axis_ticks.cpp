// Tick values and tick labels for line_chart's axes.
#include "remat/report/line_chart.hpp"

#include "remat/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace remat::report {
namespace {

// Tolerance for "this value is a whole tick step": ticks are built from products that round.
constexpr double epsilon = 1e-9;

std::vector<double> linear_ticks(double lo, double hi, bool fixed_lo, bool fixed_hi)
{
    if (hi <= lo) {
        const double pad = std::max(1.0, std::abs(lo) * 0.1);
        lo -= pad;
        hi += pad;
    }
    const double raw = (hi - lo) / 6;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double normalized = raw / magnitude;
    const double step = (normalized <= 1 ? 1 : normalized <= 2 ? 2 : normalized <= 5 ? 5 : 10) * magnitude;
    const double first = fixed_lo ? std::ceil(lo / step - epsilon) : std::floor(lo / step + epsilon);
    const double last = fixed_hi ? std::floor(hi / step + epsilon) : std::ceil(hi / step - epsilon);
    std::vector<double> ticks;
    for (double k = first; k <= last + epsilon; k += 1) {
        const double v = k * step;
        ticks.push_back(std::abs(v) < step * epsilon ? 0.0 : v); // no "-0" from rounding
    }
    return ticks;
}

std::vector<double> log_ticks(double lo, double hi, bool fixed_lo, bool fixed_hi)
{
    auto e_lo = static_cast<int>(std::floor(std::log10(lo) + epsilon));
    auto e_hi = static_cast<int>(std::ceil(std::log10(hi) - epsilon));
    if (e_hi <= e_lo)
        e_hi = e_lo + 1;
    const int decades = e_hi - e_lo;
    std::vector<double> ticks;
    auto keep = [&](double v) {
        if ((!fixed_lo || v >= lo * (1 - epsilon)) && (!fixed_hi || v <= hi * (1 + epsilon)))
            ticks.push_back(v);
    };
    if (decades <= 2) {
        for (int e = e_lo; e <= e_hi; ++e)
            for (const double m : {1.0, 2.0, 5.0})
                if (e < e_hi || m == 1.0)
                    keep(m * std::pow(10.0, e));
    } else {
        const int stride = (decades + 7) / 8;
        const int top = e_lo + (decades + stride - 1) / stride * stride;
        for (int e = e_lo; e <= top; e += stride)
            keep(std::pow(10.0, e));
    }
    if (ticks.size() < 2) // a fixed range inside one decade: tick it linearly
        return linear_ticks(lo, hi, true, true);
    return ticks;
}

std::string superscript(int exponent)
{
    static constexpr std::array<const char*, 10> digits{"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
    std::string text = exponent < 0 ? "⁻" : "";
    for (const char c : std::to_string(std::abs(exponent)))
        text += digits[static_cast<std::size_t>(c - '0')];
    return text;
}

std::string plain(double value)
{
    std::string text = fmt::format("{:.6g}", value);
    return text == "-0" ? "0" : text;
}

} // namespace

std::vector<double> axis_ticks(const axis& a, double lo, double hi)
{
    if (!std::isfinite(lo) || !std::isfinite(hi) || hi < lo)
        throw argument_error(fmt::format("axis \"{}\": expected a finite range, got [{}, {}]", a.label, lo, hi));
    if (a.kind == scale::log) {
        if (lo <= 0)
            throw argument_error(fmt::format("axis \"{}\" is logarithmic: expected values > 0, got {}", a.label, lo));
        return log_ticks(lo, hi, a.min.has_value(), a.max.has_value());
    }
    return linear_ticks(lo, hi, a.min.has_value(), a.max.has_value());
}

std::string tick_label(double value, scale kind)
{
    if (value == 0)
        return "0";
    const double magnitude = std::abs(value);
    const auto exponent = static_cast<int>(std::floor(std::log10(magnitude) + epsilon));
    const double mantissa = value / std::pow(10.0, exponent);
    const bool whole_mantissa = std::abs(mantissa - std::round(mantissa)) < 1e-6;
    if (kind == scale::log && whole_mantissa && (exponent >= 5 || exponent <= -4)) {
        const auto m = static_cast<long>(std::round(mantissa));
        return (m == 1    ? std::string()
                : m == -1 ? std::string("-")
                          : fmt::format("{}×", m)) +
               "10" + superscript(exponent);
    }
    if (magnitude >= 1e4) {
        static constexpr std::array<std::pair<double, const char*>, 4> suffixes{
            {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}}};
        for (const auto& [scale_value, suffix] : suffixes)
            if (magnitude >= scale_value)
                return plain(value / scale_value) + suffix;
        return plain(value / 1e3) + "k";
    }
    if (magnitude < 1e-3) {
        const double m = std::round(mantissa * 1000) / 1000;
        return plain(m) + "×10" + superscript(exponent);
    }
    return plain(value);
}

} // namespace remat::report
