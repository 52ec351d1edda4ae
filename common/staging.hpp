// Host-device copies of ordinary (pageable) host memory at pinned speed.
//
// cudaMemcpy from pageable memory runs at a fraction of the bus's speed (the
// driver stages it through a small pinned buffer of its own, one piece at a time;
// 0.6-1.8 GB/s measured on the H100 machine). These copies go through a ring of
// pinned buffers instead: the host threads (workers.hpp) copy piece k+1 into a
// pinned buffer while the DMA engine moves piece k, so the copy runs at the bus's
// pinned speed when the host's memory copies keep up.
//
// With a device-side step per piece (stream_to_device / stream_from_device) the
// pieces also pass through device buffers, so that a kernel converts the layout
// (ghost padding, precision) on the GPU while the next piece is on its way.
//
// Pieces are kStagingBytes; the ring is kStagingBuffers deep. One transfer at a
// time per process (a lock): the tools copy from one thread.
#pragma once
#ifdef NUMPIPE_HAVE_CUDA
#include <cuda_runtime.h>

#include <cstddef>
#include <functional>

namespace numpipe {

inline constexpr std::size_t kStagingBytes = std::size_t(8) << 20;
inline constexpr int kStagingBuffers = 4;

// Allocates the pinned ring now (the early start does it while the input is read,
// when the tool asked: request_staging_early in device.hpp); else the first copy does.
void prepare_staging();

// Drops the pinned buffers and device buffers of the staging ring without freeing
// them: their contexts are about to be destroyed (release_devices_in_background),
// which frees them. A later copy would make new ones.
void forget_staging();

// Copies `bytes` from host `src` to device `dst` on `stream` (after the stream's
// earlier work). Returns once `src` may be reused; the device copy completes in
// stream order. Pinned sources and small copies go straight to cudaMemcpyAsync.
void copy_to_device(void* dst, const void* src, std::size_t bytes, cudaStream_t stream);
// Copies `bytes` from device `src` to host `dst` after the stream's earlier work;
// returns when `dst` holds them.
void copy_to_host(void* dst, const void* src, std::size_t bytes, cudaStream_t stream);

// Sends host `src` to the device piece by piece: for each piece (a multiple of
// `align` bytes but the last), once its bytes are in a device buffer,
// consume(device_piece, offset, length) queues the device work that uses them on
// `stream`. Returns once `src` may be reused; consume's work completes in stream order.
void stream_to_device(const void* src, std::size_t bytes, std::size_t align, cudaStream_t stream,
                      const std::function<void(const void* piece, std::size_t offset, std::size_t length)>& consume);
// The other way: produce(device_piece, offset, length) queues on `stream` the device
// work that fills a device buffer with bytes [offset, offset + length) of the result,
// which then land in host `dst`. Returns when `dst` holds all `bytes`.
void stream_from_device(void* dst, std::size_t bytes, std::size_t align, cudaStream_t stream,
                        const std::function<void(void* piece, std::size_t offset, std::size_t length)>& produce);

}  // namespace numpipe
#endif  // NUMPIPE_HAVE_CUDA
