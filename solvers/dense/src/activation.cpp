// Names of the activations, for options and reports.
#include "remat/dense/activation.hpp"
#include "remat/error.hpp"

#include <array>
#include <string>
#include <utility>

namespace remat::dense {

namespace {
constexpr std::array<std::pair<activation, const char*>, 5> names{{{activation::identity, "identity"},
                                                                   {activation::tanh, "tanh"},
                                                                   {activation::softplus, "softplus"},
                                                                   {activation::sigmoid, "sigmoid"},
                                                                   {activation::relu, "relu"}}};
} // namespace

const char* name(activation a) noexcept
{
    for (const auto& [value, text] : names)
        if (value == a)
            return text;
    return "unknown";
}

activation parse_activation(std::string_view text)
{
    std::string choices;
    for (const auto& [value, name_text] : names) {
        if (text == name_text)
            return value;
        choices += choices.empty() ? "" : ", ";
        choices += name_text;
    }
    throw argument_error("unknown activation '" + std::string(text) + "' (expected one of " + choices + ")");
}

} // namespace remat::dense
