package io.hayloft.format.ring;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A consistent-hash ring over named nodes (cache node addresses such as {@code cache1:8090}) that
 * maps a 64-bit photo key to one node. Each node owns {@code pointsPerNode} points on a ring of
 * 64-bit positions; a key belongs to the first point at or after its own position (wrapping). When
 * a node is added it takes over only keys from the points it inserts, about {@code 1/(n+1)} of
 * them; when one is removed only its keys move, each to its successor. Every party that routes (the
 * directory, the client, tools) builds the same ring from the same node list, so this mapping is
 * part of the wire contract and is fixed:
 * <ul>
 *   <li>point {@code i} of node {@code name}: {@code mix64(fnv1a64(utf8(name + "#" + i)))};</li>
 *   <li>position of key {@code k}: {@code mix64(k)};</li>
 *   <li>positions compare as unsigned 64-bit numbers; equal positions are broken by node name;</li>
 *   <li>{@code mix64} is the SplitMix64 / MurmurHash3 64-bit finalizer, {@code fnv1a64} is FNV-1a 64.</li>
 * </ul>
 * The node order given to the constructor does not matter.
 *
 * <p>Immutable and thread-safe; {@link #with} and {@link #without} return new rings.
 */
public final class HashRing {
    /** Points per node by default: spreads keys within a few percent of even for small clusters. */
    public static final int DEFAULT_POINTS_PER_NODE = 160;

    private final List<String> nodes;
    private final int pointsPerNode;
    private final long[] positions; // sorted as unsigned
    private final int[] owners; // index into nodes, parallel to positions

    /**
     * @param nodes distinct, non-blank node names; at least one
     * @param pointsPerNode points each node places on the ring, 1..4096
     * @throws IllegalArgumentException naming the bad node or count
     */
    public HashRing(List<String> nodes, int pointsPerNode) {
        Objects.requireNonNull(nodes, "nodes");
        if (pointsPerNode < 1 || pointsPerNode > 4096) {
            throw new IllegalArgumentException("pointsPerNode must be in 1..4096, got " + pointsPerNode);
        }
        if (nodes.isEmpty()) {
            throw new IllegalArgumentException("a hash ring needs at least one node");
        }
        Set<String> seen = new LinkedHashSet<>();
        for (String n : nodes) {
            if (n == null || n.isBlank()) {
                throw new IllegalArgumentException("node names must be non-blank, got '" + n + "' in " + nodes);
            }
            if (!seen.add(n)) {
                throw new IllegalArgumentException("node '" + n + "' is listed twice in " + nodes);
            }
        }
        List<String> sorted = new ArrayList<>(seen);
        sorted.sort(null);
        this.nodes = List.copyOf(sorted);
        this.pointsPerNode = pointsPerNode;
        int total = sorted.size() * pointsPerNode;
        long[][] pts = new long[total][];
        int j = 0;
        for (int n = 0; n < sorted.size(); n++) {
            for (int i = 0; i < pointsPerNode; i++) {
                pts[j++] = new long[] {mix64(fnv1a64(sorted.get(n) + "#" + i)), n};
            }
        }
        // Ties on position go to the smaller node index, i.e. the smaller name: deterministic.
        Arrays.sort(pts, (a, b) -> a[0] != b[0] ? Long.compareUnsigned(a[0], b[0]) : Long.compare(a[1], b[1]));
        positions = new long[total];
        owners = new int[total];
        for (int i = 0; i < total; i++) {
            positions[i] = pts[i][0];
            owners[i] = (int) pts[i][1];
        }
    }

    /** A ring with {@link #DEFAULT_POINTS_PER_NODE} points per node. */
    public HashRing(List<String> nodes) {
        this(nodes, DEFAULT_POINTS_PER_NODE);
    }

    /** The node that owns {@code key}. */
    public String nodeFor(long key) {
        return nodes.get(owners[indexFor(mix64(key))]);
    }

    /**
     * The owner of {@code key} followed by the next distinct nodes clockwise, {@code count} in all
     * (fewer if the ring has fewer nodes): where to go when the owner is down.
     */
    public List<String> nodesFor(long key, int count) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be >= 1, got " + count);
        }
        int want = Math.min(count, nodes.size());
        List<String> out = new ArrayList<>(want);
        int start = indexFor(mix64(key));
        for (int i = 0; i < positions.length && out.size() < want; i++) {
            String n = nodes.get(owners[(start + i) % positions.length]);
            if (!out.contains(n)) {
                out.add(n);
            }
        }
        return out;
    }

    private int indexFor(long pos) {
        int lo = 0;
        int hi = positions.length; // first index with positions[i] >= pos, in [0, length]
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Long.compareUnsigned(positions[mid], pos) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo == positions.length ? 0 : lo;
    }

    /** The nodes, sorted by name. */
    public List<String> nodes() {
        return nodes;
    }

    public int pointsPerNode() {
        return pointsPerNode;
    }

    /** This ring plus {@code node}. */
    public HashRing with(String node) {
        List<String> n = new ArrayList<>(nodes);
        n.add(node);
        return new HashRing(n, pointsPerNode);
    }

    /** This ring without {@code node}; refuses to remove an unknown node or the last one. */
    public HashRing without(String node) {
        if (!nodes.contains(node)) {
            throw new IllegalArgumentException("node '" + node + "' is not in the ring " + nodes);
        }
        List<String> n = new ArrayList<>(nodes);
        n.remove(node);
        return new HashRing(n, pointsPerNode);
    }

    /** SplitMix64 / MurmurHash3 fmix64: a bijective 64-bit mixer. */
    public static long mix64(long z) {
        z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
        z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
        return z ^ (z >>> 33);
    }

    /** FNV-1a 64 over the UTF-8 bytes of {@code s}. */
    public static long fnv1a64(String s) {
        long h = 0xcbf29ce484222325L;
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        return h;
    }

    @Override
    public String toString() {
        return "HashRing" + nodes + "x" + pointsPerNode;
    }
}
