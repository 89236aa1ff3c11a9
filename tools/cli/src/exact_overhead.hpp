// Overheads compared exactly: `remat tradeoff --max-overhead X` answers the fewest slots whose predicted cost is
// at most X times store-all's. In doubles that answer was 130 slots short at T = 1e18, where a cost near 1e18 is
// rounded to a multiple of 128; here each cost stays a sum of exact terms and the limit the fraction its text
// says, compared in integers of any size (Boost.Multiprecision's cpp_int: a double's value times 2^1074 alone
// takes up to 2098 bits).
#pragma once

#include "remat/schedule/cost.hpp"
#include "remat/schedule/multilevel_model.hpp"

#include <boost/multiprecision/cpp_int.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

namespace remat::cli {

/// One term of a predicted cost: a cost of the model (a double >= 0, exact as it stands) times a count.
struct cost_term {
    double cost = 0;
    std::uint64_t count = 0;
};

/// The terms remat::predicted_cost sums (its value is their sum in doubles): step_cost x forward steps,
/// reverse_cost x reverse steps, each level's write and read costs x its stores and restores.
[[nodiscard]] std::vector<cost_term> cost_terms(const schedule_cost& counts, const cost_model& model);

/// An overhead limit > 0 as an exact fraction.
class overhead_limit {
public:
    /// A finite double > 0, exactly.
    explicit overhead_limit(double value);
    /// `text`, which std::stod reads as `value` (finite, > 0), exactly where it is a decimal (spaces, an
    /// optional +, digits with an optional point, an optional exponent): "1.2" is 6/5, not the double nearest
    /// it. Any other form std::stod takes (a hexadecimal float) is `value` exactly.
    overhead_limit(std::string_view text, double value);

    /// The limit as a double, for reports.
    [[nodiscard]] double value() const noexcept { return value_; }

    /// Whether cost <= limit x base, exactly. An overhead over a base of 0 is 1, as tradeoff_row::overhead
    /// says it.
    [[nodiscard]] bool admits(const std::vector<cost_term>& cost, const std::vector<cost_term>& base) const;

private:
    double value_ = 1;
    boost::multiprecision::cpp_int numerator_{1}, denominator_{1};
};

} // namespace remat::cli
