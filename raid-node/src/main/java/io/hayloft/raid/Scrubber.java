package io.hayloft.raid;

import io.hayloft.format.wire.StripeMap;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads every block of every committed stripe map at a bounded rate, recomputes its CRC32C from the
 * bytes and reports blocks whose bytes do not match the map as corrupt. A store's block listing
 * cannot find bit rot: its CRC is computed once and cached until the block is written again
 * ({@code BlockStore}), so only reading the bytes does.
 *
 * <p>One cycle ({@link #cycle}) walks the maps in volume, stripe, unit order, reading
 * {@code transferBytes} per request through a {@link Throttle} of the policy's scrub rate (all
 * stores together). Blocks on stores that are not UP, and blocks a store cannot serve, are skipped:
 * the {@link BlockFixer} scan finds those.
 *
 * <p>Thread-safe: progress counters are atomic; {@link #cycle} is meant to be run by one thread at
 * a time (the server's scrub thread, or an operator's {@code POST /admin/scrub} queued behind it).
 */
public final class Scrubber {

    private static final Logger LOG = LoggerFactory.getLogger(Scrubber.class);

    /** A block whose bytes differ from its stripe map. */
    public record Finding(int volume, int stripe, int unit, String store, String name, String why) {
    }

    private final Cluster cluster;
    private final int transferBytes;
    private final AtomicLong cycles = new AtomicLong();
    private final AtomicLong cycleBytesDone = new AtomicLong();
    private final AtomicLong cycleBytesTotal = new AtomicLong();
    private final AtomicLong totalBytes = new AtomicLong();
    private final AtomicLong totalCorrupt = new AtomicLong();
    private final AtomicLong blocksChecked = new AtomicLong();
    private volatile boolean stopped;

    public Scrubber(Cluster cluster, int transferBytes) {
        if (transferBytes < 1) {
            throw new IllegalArgumentException("transferBytes must be >= 1, was " + transferBytes);
        }
        this.cluster = cluster;
        this.transferBytes = transferBytes;
    }

    /**
     * Checks every block once, reading at most {@code bytesPerSecond} (0: unlimited).
     *
     * @return the corrupt blocks found
     * @throws IOException when the directory cannot list the stripe maps or stores
     */
    public List<Finding> cycle(long bytesPerSecond) throws IOException {
        Throttle throttle = new Throttle(bytesPerSecond);
        Map<String, Cluster.StoreRef> stores = cluster.stores();
        List<StripeMap> maps = new ArrayList<>();
        long total = 0;
        for (StripeMap m : cluster.stripeMaps()) {
            if (StripeMap.COMMITTED.equals(m.status())) {
                maps.add(m);
                total += m.stripes().stream().flatMap(s -> s.blocks().stream()).mapToLong(StripeMap.Block::length).sum();
            }
        }
        cycleBytesTotal.set(total);
        cycleBytesDone.set(0);
        List<Finding> found = new ArrayList<>();
        for (StripeMap m : maps) {
            for (StripeMap.Stripe s : m.stripes()) {
                for (int u = 0; u < s.blocks().size() && !stopped; u++) {
                    StripeMap.Block b = s.blocks().get(u);
                    Cluster.StoreRef ref = stores.get(b.store());
                    if (ref == null || !ref.up()) {
                        cycleBytesDone.addAndGet(b.length());
                        continue;
                    }
                    String why = check(ref, b, throttle);
                    blocksChecked.incrementAndGet();
                    if (why != null) {
                        totalCorrupt.incrementAndGet();
                        LOG.warn("scrub: volume {} stripe {} unit {} ({} on {}) is corrupt: {}", m.volume(), s.index(), u,
                                b.name(), b.store(), why);
                        found.add(new Finding(m.volume(), s.index(), u, b.store(), b.name(), why));
                    }
                }
            }
        }
        cycles.incrementAndGet();
        return found;
    }

    /** Reads one block; null when its bytes match the map, else what differs. */
    private String check(Cluster.StoreRef ref, StripeMap.Block b, Throttle throttle) {
        CRC32C crc = new CRC32C();
        long off = 0;
        try {
            while (off < b.length() && !stopped) {
                int n = (int) Math.min(transferBytes, b.length() - off);
                throttle.acquire("scrub", n);
                byte[] got = cluster.readBlock(ref.address(), b.name(), off, n);
                crc.update(got);
                off += got.length;
                cycleBytesDone.addAndGet(got.length);
                totalBytes.addAndGet(got.length);
                if (got.length < n) {
                    return "block is " + off + " bytes, the map says " + b.length();
                }
            }
        } catch (IOException e) {
            // Missing or unreachable: the fixer's scan sees it from the listing; not ours to judge.
            LOG.debug("scrub: cannot read {} on {} ({}); skipped", b.name(), b.store(), e.toString());
            cycleBytesDone.addAndGet(b.length() - off);
            return null;
        }
        if (stopped) {
            return null;
        }
        return crc.getValue() == b.crc32c() ? null
                : String.format("CRC32C of the bytes is %08x, the map says %08x", crc.getValue(), b.crc32c());
    }

    /** Ends a running cycle at its next read (the server is closing). */
    public void stop() {
        stopped = true;
    }

    public long cycles() {
        return cycles.get();
    }

    /** Bytes checked so far in the current (or last) cycle. */
    public long cycleBytesDone() {
        return cycleBytesDone.get();
    }

    /** Bytes of all blocks the current (or last) cycle checks. */
    public long cycleBytesTotal() {
        return cycleBytesTotal.get();
    }

    /** Bytes read by every cycle. */
    public long bytesRead() {
        return totalBytes.get();
    }

    public long corruptFound() {
        return totalCorrupt.get();
    }

    public long blocksChecked() {
        return blocksChecked.get();
    }
}
