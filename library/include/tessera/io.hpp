#pragma once
// Image files through OpenCV. Local (call on the root).
#include <filesystem>

#include "tessera/image.hpp"

namespace tessera {

/// Reads any image OpenCV reads as float grey: colour becomes luminance
/// (0.299 R + 0.587 G + 0.114 B, OpenCV's rule), 8-bit values keep their 0..255
/// range, 16-bit 0..65535, float files as they are. Throws IoError naming the file
/// if it is missing or unreadable.
Image read_image(const std::filesystem::path& path);

/// Writes a one-channel 32-bit float TIFF. The file appears whole or not at all
/// (written to a temporary name in the same folder, then renamed). Throws IoError.
void write_float_tiff(const std::filesystem::path& path, const Image& image);

/// Writes an 8-bit PNG preview: values mapped linearly from [min, max] to [0, 255]
/// (a symmetric range around 0 if the image has both signs, so 0 is mid-grey).
/// Atomic like write_float_tiff. Throws IoError.
void write_png_preview(const std::filesystem::path& path, const Image& image);

}  // namespace tessera
