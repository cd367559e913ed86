#pragma once
// Several processes' clocks on one time line (Cristian's method): the pure part.
#include <span>

namespace tessera {

/// One round trip between the root and a peer: the root's clock when it sent, the
/// peer's clock when it answered, the root's clock when the answer arrived (seconds).
struct ClockReading {
  double sent = 0, peer = 0, received = 0;
};

/// The peer's clock minus the root's, in seconds, from the round trip of least duration
/// (the least delayed): the peer is taken to have read its clock halfway between the
/// root's send and receive, which errs by at most half that round trip. Throws
/// InvalidArgument for no readings, a non-finite reading, or an answer that arrived
/// before it was asked for.
double clock_offset(std::span<const ClockReading> readings);

}  // namespace tessera
