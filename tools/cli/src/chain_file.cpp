#include "chain_file.hpp"

#include "remat/cli/parse.hpp"

#include "remat/error.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace remat::cli {
namespace {

using json = nlohmann::json;

double cost_field(const json& step, const char* name, const std::string& where)
{
    if (!step.contains(name))
        throw usage_error(where + ": missing \"" + name + "\"");
    const json& v = step.at(name);
    if (!v.is_number())
        throw usage_error(where + ": \"" + name + "\" must be a number, got " + v.dump());
    return v.get<double>();
}

std::uint64_t bytes_field(const json& object, const char* name, const std::string& where, bool required)
{
    if (!object.contains(name)) {
        if (required)
            throw usage_error(where + ": missing \"" + name + "\"");
        return 0;
    }
    const json& v = object.at(name);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
        // 1e3 and 1000.0 are JSON floats: "must be a whole number, got 1000.0" named no fault
        throw usage_error(where + ": \"" + name + "\" must be a whole number of bytes >= 0" +
                          (v.is_number_float() ? " written as an integer, without a point or exponent" : "") +
                          ", got " + v.dump());
    return v.get<std::uint64_t>();
}

} // namespace

chain_model parse_chain(const std::string& text, const std::string& source)
{
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::parse_error& e) {
        throw usage_error(source + ": not valid JSON (" + e.what() + ")");
    } catch (const json::out_of_range& e) {
        // JSON has no infinity: a literal such as 1e400 is how a non-finite cost reaches this file
        throw usage_error(source + ": a number too large to be finite (" + e.what() + ")");
    }
    if (!doc.is_object())
        throw usage_error(source + ": expected an object with \"steps\" and \"final_state_bytes\", got " +
                          std::string(doc.type_name()));
    for (const auto& [key, value] : doc.items())
        if (key != "steps" && key != "final_state_bytes")
            throw usage_error(source + ": unknown field \"" + key + "\" (expected steps and final_state_bytes)");
    if (!doc.contains("steps") || !doc["steps"].is_array())
        throw usage_error(source + ": \"steps\" must be an array of steps");
    chain_model chain;
    std::size_t k = 0;
    for (const json& step : doc["steps"]) {
        const std::string where = source + ": step " + std::to_string(k);
        if (!step.is_object())
            throw usage_error(where + ": expected an object, got " + step.dump());
        for (const auto& [key, value] : step.items())
            if (key != "forward" && key != "adjoint" && key != "state_bytes" && key != "adjoint_bytes" &&
                key != "tape_bytes")
                throw usage_error(where + ": unknown field \"" + key +
                                  "\" (expected forward, adjoint, state_bytes, adjoint_bytes, tape_bytes)");
        chain.steps.push_back({cost_field(step, "forward", where), cost_field(step, "adjoint", where),
                               bytes_field(step, "state_bytes", where, true),
                               bytes_field(step, "adjoint_bytes", where, false),
                               bytes_field(step, "tape_bytes", where, false)});
        ++k;
    }
    chain.final_state_bytes = bytes_field(doc, "final_state_bytes", source, true);
    try {
        validate(chain);
    } catch (const argument_error& e) {
        throw usage_error(source + ": " + e.what());
    }
    return chain;
}

chain_model read_chain_file(const std::string& path)
{
    // A directory opens, and read as empty text: "not valid JSON (... unexpected end of input)".
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw usage_error("--chain " + path + ": is a directory, not a chain file");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw usage_error("--chain " + path + ": cannot be read (" + std::strerror(errno) + ")");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_chain(text.str(), path);
}

} // namespace remat::cli
