"""A small simulation of PyTorch's CUDA caching allocator (native, no expandable segments).

The tracker's main number rounds every storage to 512 B, which is what the allocator does
for blocks that are split off a segment.  But ``allocated_bytes`` counts whole *blocks*,
and a block is only split when the remainder is large enough, so a large tensor can be
charged up to 1 MiB more than its rounded size.  Fed with the tracker's exact sequence of
allocations and frees, this simulation reproduces that, and the reserved (segment) total
behind ``max_memory_reserved()``.

Rules (c10/cuda/CUDACachingAllocator.cpp, default config):
* round_size: < 512 B -> 512, else a multiple of 512;
* requests <= 1 MiB use the small pool (2 MiB segments), larger ones the large pool;
* a new segment is 2 MiB (small), 20 MiB (1 MiB < size < 10 MiB) or size rounded up to 2 MiB;
* best fit: the smallest free block of the pool that is large enough (ties: lowest address);
* split when the remainder is >= 512 B (small pool) or > 1 MiB (large pool), else the
  whole block is handed out (and counted);
* a freed block merges with free neighbours of its segment; segments are never released
  (no empty_cache, no OOM retry).
One stream only; no allocator workspaces; addresses are synthetic (monotonic per segment).
"""

from __future__ import annotations

from bisect import bisect_left, insort

K_MIN_BLOCK = 512
K_SMALL_SIZE = 1 << 20
K_SMALL_BUFFER = 2 << 20
K_LARGE_BUFFER = 20 << 20
K_MIN_LARGE_ALLOC = 10 << 20
K_ROUND_LARGE = 2 << 20


def round_size(n: int) -> int:
    if n < K_MIN_BLOCK:
        return K_MIN_BLOCK
    return K_MIN_BLOCK * ((n + K_MIN_BLOCK - 1) // K_MIN_BLOCK)


def allocation_size(size: int) -> int:
    if size <= K_SMALL_SIZE:
        return K_SMALL_BUFFER
    if size < K_MIN_LARGE_ALLOC:
        return K_LARGE_BUFFER
    return K_ROUND_LARGE * ((size + K_ROUND_LARGE - 1) // K_ROUND_LARGE)


class Block:
    __slots__ = ("size", "addr", "small", "prev", "next", "allocated")

    def __init__(self, size, addr, small):
        self.size = size
        self.addr = addr
        self.small = small
        self.prev = None
        self.next = None
        self.allocated = False


class CachingAllocatorSim:
    def __init__(self):
        self.pools = {True: [], False: []}  # small? -> sorted [(size, addr, id(block))]
        self.by_id: dict[int, Block] = {}
        self.next_addr = 0
        self.allocated = 0
        self.reserved = 0
        self.requested = 0

    def _insert(self, b: Block):
        insort(self.pools[b.small], (b.size, b.addr, id(b)))
        self.by_id[id(b)] = b

    def _remove(self, b: Block):
        pool = self.pools[b.small]
        i = bisect_left(pool, (b.size, b.addr, id(b)))
        assert pool[i][2] == id(b)
        pool.pop(i)
        del self.by_id[id(b)]

    def malloc(self, nbytes: int) -> Block | None:
        if nbytes <= 0:
            return None
        size = round_size(nbytes)
        small = size <= K_SMALL_SIZE
        pool = self.pools[small]
        i = bisect_left(pool, (size, -1, -1))
        if i < len(pool):
            b = self.by_id.pop(pool.pop(i)[2])
        else:
            seg = allocation_size(size)
            b = Block(seg, self.next_addr, small)
            self.next_addr += seg
            self.reserved += seg
        remaining = b.size - size
        if (remaining >= K_MIN_BLOCK) if small else (remaining > K_SMALL_SIZE):
            rest = Block(remaining, b.addr + size, small)
            rest.prev, rest.next = b, b.next
            if b.next is not None:
                b.next.prev = rest
            b.next = rest
            b.size = size
            self._insert(rest)
        b.allocated = True
        self.allocated += b.size
        return b

    def free(self, b: Block | None) -> None:
        if b is None:
            return
        b.allocated = False
        self.allocated -= b.size
        p = b.prev
        if p is not None and not p.allocated:
            self._remove(p)
            p.size += b.size
            p.next = b.next
            if b.next is not None:
                b.next.prev = p
            b = p
        n = b.next
        if n is not None and not n.allocated:
            self._remove(n)
            b.size += n.size
            b.next = n.next
            if n.next is not None:
                n.next.prev = b
        self._insert(b)
