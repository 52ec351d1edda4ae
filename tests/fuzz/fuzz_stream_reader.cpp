// libFuzzer target for numpipe's stream reader (common/stream.cpp).
//
// The first input byte picks the mode; the rest is the data:
//   even  raw mode: the bytes are a compressed .nps stream, read as they are
//         (exercises the zstd frame handling and everything behind it).
//   odd   decompressed mode: the bytes are the DECOMPRESSED stream ("NUMPIPE\0",
//         version, records); the target compresses them with ZSTD_compress
//         (content checksum on) before reading, so the fuzzer explores the
//         record/JSON layer instead of zstd's entropy decoder. mode >> 1 picks
//         how the bytes are cut into zstd frames: 0 = one frame, k = frames of
//         k*8 bytes (frame boundaries inside headers and payloads).
//
// The reader may reject an input only with numpipe::Error; any other exception,
// a crash, or a sanitizer report is a finding. ReadLimits are small so that a
// header claiming a huge payload is refused rather than allocated.
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "common/error.hpp"
#include "common/stream.hpp"

namespace {

constexpr numpipe::ReadLimits kLimits{/*max_bytes=*/1u << 20, /*max_header_bytes=*/1u << 20, /*max_total_bytes=*/1u << 22};

// Reads every record, touching each payload so that a wrong size shows up under ASan.
// Records go through the lazy interface: most are read (next_header, read_payload),
// some passed over (skip_payload), and some headers are followed at once by the
// next next_header (which skips the pending payload itself).
void read_everything(const unsigned char* data, std::size_t size) {
  numpipe::MemorySource src(data, size, "fuzz");
  numpipe::StreamReader reader(src, kLimits);
  numpipe::Record r;
  numpipe::RecordHeader h;
  std::size_t n = 0;
  while (reader.next_header(h)) {
    const std::size_t how = (h.index + h.name.size()) % 4;
    if (how == 1) {
      reader.skip_payload();
    } else if (how == 2) {
      // left pending: the next next_header() skips it
    } else {
      reader.read_payload(std::move(h), r);
      std::size_t count = r.size();
      if (r.payload.bytes() != count * numpipe::dtype_size(r.dtype)) std::abort();
      if (count) {
        volatile double first = r.value_as_double(0), last = r.value_as_double(count - 1);
        (void)first;
        (void)last;
      }
      (void)r.attrs.dump();
    }
    h = numpipe::RecordHeader();
    if (++n > 100000) break;
  }
}

bool compress_into(std::vector<unsigned char>& out, const unsigned char* src, std::size_t n, ZSTD_CCtx* cctx) {
  std::size_t at = out.size();
  out.resize(at + ZSTD_compressBound(n));
  std::size_t got = ZSTD_compress2(cctx, out.data() + at, out.size() - at, src, n);
  if (ZSTD_isError(got)) return false;
  out.resize(at + got);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  unsigned mode = size ? data[0] : 0;
  const unsigned char* body = size ? data + 1 : data;
  std::size_t body_size = size ? size - 1 : 0;

  std::vector<unsigned char> compressed;
  if (mode & 1) {
    static ZSTD_CCtx* cctx = [] {
      ZSTD_CCtx* c = ZSTD_createCCtx();
      ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
      ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
      return c;
    }();
    std::size_t chunk = (mode >> 1) * 8;
    if (chunk == 0) chunk = body_size ? body_size : 1;
    if (body_size == 0) {
      if (!compress_into(compressed, body, 0, cctx)) std::abort();
    }
    for (std::size_t at = 0; at < body_size; at += chunk) {
      std::size_t n = body_size - at < chunk ? body_size - at : chunk;
      if (!compress_into(compressed, body + at, n, cctx)) std::abort();
    }
    body = compressed.data();
    body_size = compressed.size();
  }

  try {
    read_everything(body, body_size);
  } catch (const numpipe::Error& e) {
    if (e.code() != numpipe::ExitCode::bad_input && e.code() != numpipe::ExitCode::resource) {
      std::fprintf(stderr, "numpipe::Error with unexpected code %d: %s\n", static_cast<int>(e.code()), e.what());
      std::abort();
    }
  }
  // Anything else propagates: libFuzzer reports an uncaught exception as a crash.
  return 0;
}
