// np-stream-bench: the stream writer's and reader's speed on one large record, for
// bench/e2e (not a test). Writes a record of BYTES (f8: normal random numbers, or a
// smooth field) through StreamWriter at a level into memory and reads it back with
// StreamReader, then through a real pipe (a writer thread, a reader thread), with the
// io pool at each thread count asked; prints one line per case:
//   data level threads  write GB/s  read GB/s  pipe GB/s  compressed/raw
// (GB/s of raw array data: payload bytes per second of wall time).
//   np-stream-bench [BYTES] [LEVELS: 1,-5,0] [THREADS: 1,4,16]
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/stream.hpp"
#include "common/workers.hpp"

using namespace numpipe;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::vector<int> list(const char* s) {
  std::vector<int> v;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) v.push_back(std::stoi(item));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t bytes = argc > 1 ? std::stoull(argv[1]) : (std::size_t(1) << 30);
  const std::vector<int> levels = list(argc > 2 ? argv[2] : "1,-5,0");
  const std::vector<int> threads = list(argc > 3 ? argv[3] : "1,4,16");
  const std::size_t n = bytes / 8;
  for (const char* data : {"normal", "smooth"}) {
    Record r = Record::make("x", DType::f8, {static_cast<std::int64_t>(n)});
    double* x = r.data<double>();
    if (std::strcmp(data, "normal") == 0) {
      std::mt19937_64 g(1);
      std::normal_distribution<double> d;
      for (std::size_t i = 0; i < n; ++i) x[i] = d(g);
    } else {
      for (std::size_t i = 0; i < n; ++i) x[i] = std::sin(1e-6 * static_cast<double>(i)) * std::cos(3e-7 * static_cast<double>(i));
    }
    {  // The pipe alone: the payload in 1 MiB write()s, read into one 1 MiB buffer.
      int fds[2];
      if (pipe(fds) != 0) return 1;
      fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
      const double t0 = now();
      std::thread writer([&] {
        const auto* p = reinterpret_cast<const char*>(r.payload.data());
        for (std::size_t at = 0; at < bytes;) {
          const ssize_t put = ::write(fds[1], p + at, std::min<std::size_t>(1 << 20, bytes - at));
          if (put <= 0) break;
          at += static_cast<std::size_t>(put);
        }
        close(fds[1]);
      });
      std::vector<char> buf(1 << 20);
      std::size_t got = 0;
      for (ssize_t k; (k = ::read(fds[0], buf.data(), buf.size())) > 0;) got += static_cast<std::size_t>(k);
      writer.join();
      close(fds[0]);
      std::printf("%-6s bare pipe (1 MiB write/read, no stream): %6.2f GB/s (%zu bytes)\n", data, got / (now() - t0) * 1e-9, got);
    }
    for (int level : levels)
      for (int t : threads) {
        WorkerPool::reset_io_for_testing(t);
        MemorySink sink;
        // Touched beforehand (resize writes every page): the first touch of 1 GiB of
        // fresh memory costs more than the writer's own work.
        sink.bytes.resize(bytes + bytes / 8 + (1 << 20));
        sink.bytes.clear();
        double t0 = now();
        {
          StreamWriter w(sink, level);
          w.write(r);
          w.finish();
        }
        const double t_write = now() - t0;
        t0 = now();
        MemorySource src(sink.bytes.data(), sink.bytes.size());
        StreamReader reader(src);
        std::vector<Record> back = reader.read_all();
        const double t_read = now() - t0;
        if (back.size() != 1 || std::memcmp(back[0].payload.data(), r.payload.data(), bytes) != 0) {
          std::fprintf(stderr, "np-stream-bench: the record read back differs (level %d, %d threads)\n", level, t);
          return 1;
        }
        back.clear();
        // Through a pipe: a writer thread and a reader thread of this process.
        int fds[2];
        if (pipe(fds) != 0) return 1;
        fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
        t0 = now();
        std::thread writer([&] {
          OutputFile out("/proc/self/fd/" + std::to_string(fds[1]));
          close(fds[1]);  // the reader sees the end when `out` closes its own descriptor
          StreamWriter w(out, level);
          w.write(r);
          w.finish();
          out.commit();
        });
        std::vector<Record> piped = read_stream("/proc/self/fd/" + std::to_string(fds[0]));
        writer.join();
        const double t_pipe = now() - t0;
        close(fds[0]);
        if (piped.size() != 1 || std::memcmp(piped[0].payload.data(), r.payload.data(), bytes) != 0) {
          std::fprintf(stderr, "np-stream-bench: the record piped differs (level %d, %d threads)\n", level, t);
          return 1;
        }
        std::printf("%-6s level %3d threads %2d  write %6.2f GB/s  read %6.2f GB/s  pipe %6.2f GB/s  ratio %.3f\n", data, level,
                    t, bytes / t_write * 1e-9, bytes / t_read * 1e-9, bytes / t_pipe * 1e-9,
                    static_cast<double>(sink.bytes.size()) / static_cast<double>(bytes));
        std::fflush(stdout);
      }
  }
  return 0;
}
