#pragma once
// Schema creation and migration. Internal to tessera::perfdb; tests use it to build
// databases at older versions.
#include "sqlite.hpp"

namespace tessera::perfdb::detail {

/// PRAGMA application_id of a tessera database ("TSRA").
inline constexpr std::int64_t kApplicationId = 0x54535241;

/// Bring an empty (version 0) or older database up to `target` inside the caller's
/// transaction, setting application_id and user_version. Precondition:
/// current user_version < target <= kSchemaVersion.
void migrate(Db& db, int target);

}  // namespace tessera::perfdb::detail
