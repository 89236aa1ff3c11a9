// Reading a heterogeneous chain (`remat plan --chain FILE`) from its JSON form (remat::to_json writes it).
#pragma once

#include "remat/schedule/chain_model.hpp"

#include <string>

namespace remat::cli {

/// Parses the chain JSON `text`; `source` names it in messages. Throws usage_error naming the field and the
/// step for malformed JSON, a missing, mistyped, negative or unknown field, or a chain remat::validate refuses.
chain_model parse_chain(const std::string& text, const std::string& source);

/// Reads and parses the file at `path`; throws usage_error when it cannot be read.
chain_model read_chain_file(const std::string& path);

} // namespace remat::cli
