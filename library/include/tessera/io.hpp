#pragma once
// Image files through OpenCV. Local (call on the root).
#include <cstddef>
#include <filesystem>
#include <string_view>

#include "tessera/image.hpp"

namespace tessera {

/// Reads any image OpenCV reads as float grey: colour becomes luminance
/// (0.299 R + 0.587 G + 0.114 B, OpenCV's rule), 8-bit values keep their 0..255
/// range, 16-bit 0..65535, float files as they are. Throws IoError naming the file
/// if it is missing or unreadable. OpenCV's and libtiff's warnings are silenced
/// (their errors become this IoError).
Image read_image(const std::filesystem::path& path);

/// Writes `bytes` as the whole file at `path`, durably: to a temporary name in the
/// same folder (`.NAME.tmpPID`), fsync, then renamed over `path`, so a reader never
/// sees half a file. A process killed mid-write leaves the temporary behind; write
/// inside a ResultSet to have it cleaned up. Throws IoError with strerror's reason.
void write_file(const std::filesystem::path& path, std::string_view bytes);

/// Writes a one-channel 32-bit float TIFF, whole or not at all (see write_file).
/// Throws IoError.
void write_float_tiff(const std::filesystem::path& path, const Image& image);

/// Writes an 8-bit PNG preview: values mapped linearly from [min, max] of the finite
/// values to [0, 255] (a symmetric range around 0 if the image has both signs, so 0
/// is mid-grey). +Inf shows as 255, -Inf and NaN as 0. Written like write_file.
/// Throws IoError.
void write_png_preview(const std::filesystem::path& path, const Image& image);

/// Writes an 8-bit one-channel PNG of the values as they are (rounded to nearest,
/// saturated to 0..255; NaN as 0), e.g. a mask of 0 and 255. Written like write_file.
/// Throws IoError.
void write_png_u8(const std::filesystem::path& path, const Image& image);

/// Number of NaN and infinite pixels (to warn about them). Local.
std::size_t count_non_finite(const Image& image);

}  // namespace tessera
