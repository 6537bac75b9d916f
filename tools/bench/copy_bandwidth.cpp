#include "copy_bandwidth.h"

#include <cstring>

namespace normcheck::bench {

CopyBandwidth::CopyBandwidth(std::size_t buffer_bytes, unsigned threads)
    : bytes_(buffer_bytes),
      source_(buffer_bytes, 1),  // written here, so the pages exist before timing
      destination_(buffer_bytes, 0),
      team_(threads, [this](unsigned index, unsigned members) {
        const ByteRange share = page_share(bytes_, index, members);
        std::memcpy(destination_.data() + share.begin, source_.data() + share.begin,
                    share.end - share.begin);
      }) {}

double CopyBandwidth::measure_gbps() {
  return 2.0 * static_cast<double>(bytes_) / team_.run_seconds() * 1e-9;
}

}  // namespace normcheck::bench
