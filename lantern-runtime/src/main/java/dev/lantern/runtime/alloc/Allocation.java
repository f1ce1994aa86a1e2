package dev.lantern.runtime.alloc;

/**
 * What {@link CachingAllocator#allocate} hands out: the block's address and size, the stream
 * it was allocated on, and a unique id. Freeing checks the id, so freeing twice, or freeing a
 * handle whose memory was since given to someone else, fails instead of corrupting the cache.
 *
 * @param address   device (or host) address of the first byte
 * @param size      bytes occupied in the cache: the request rounded up, or more when a
 *                  remainder too small to split stayed inside the block
 * @param requested bytes asked for
 * @param stream    stream id it was allocated on; it may be reused there without waiting
 * @param id        unique per allocator, increasing in allocation order
 */
public record Allocation(long address, long size, long requested, long stream, long id) {
}
