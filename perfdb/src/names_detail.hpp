#pragma once
// Path/Layout names as stored in the database and in files: SPEC's canonical names
// from tessera::core, with perfdb's own error wording for files.
#include <optional>
#include <string_view>

#include "tessera/names.hpp"

namespace tessera::perfdb::detail {

std::string_view path_name(Path p);
std::string_view layout_name(Layout l);
std::optional<Path> path_from(std::string_view s);
std::optional<Layout> layout_from(std::string_view s);
/// Throws InvalidArgument "bad <what> '<s>' (expected ...)".
Path parse_path_or_throw(std::string_view s, std::string_view where);
Layout parse_layout_or_throw(std::string_view s, std::string_view where);

}  // namespace tessera::perfdb::detail
