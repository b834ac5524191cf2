package io.hayloft.format.ring;

import java.util.ArrayList;
import java.util.List;

/**
 * Where a photo's reads go when a cache tier is in front of the stores: its cache node on the ring
 * of primary nodes, then (memcache's gutter) a node of the small gutter pool, chosen by a second
 * ring, for when the primary does not answer. The client computes these URLs from its cached volume
 * map (the ring's nodes are in it) and reads them first; it uses the same routing to push and invalidate. Cache URLs name the
 * store to fill from: {@code http://<cacheNode>/<storeAddress>} + the needle path.
 *
 * <p>Immutable and thread-safe.
 */
public final class CacheRouting {
    private final HashRing primaries;
    private final HashRing gutter; // null when there is no gutter pool

    /**
     * @param cacheNodes primary cache nodes ({@code host:port}), at least one
     * @param gutterNodes gutter nodes, possibly none
     */
    public CacheRouting(List<String> cacheNodes, List<String> gutterNodes) {
        this.primaries = new HashRing(cacheNodes);
        this.gutter = gutterNodes == null || gutterNodes.isEmpty() ? null : new HashRing(gutterNodes);
        if (gutter != null) {
            for (String g : gutter.nodes()) {
                if (primaries.nodes().contains(g)) {
                    throw new IllegalArgumentException("node " + g + " is both a cache node and a gutter node");
                }
            }
        }
    }

    /** The primary cache node of a photo key. */
    public String nodeFor(long key) {
        return primaries.nodeFor(key);
    }

    /** The gutter node of a photo key, or null without a gutter pool. */
    public String gutterFor(long key) {
        return gutter == null ? null : gutter.nodeFor(key);
    }

    /** The primary then the gutter node of {@code key}. */
    public List<String> nodesFor(long key) {
        List<String> out = new ArrayList<>(2);
        out.add(nodeFor(key));
        if (gutter != null) {
            out.add(gutter.nodeFor(key));
        }
        return out;
    }

    /** URL prefixes ({@code http://<node>/<store>}) of {@link #nodesFor}, to which a needle path is appended. */
    public List<String> urlPrefixes(long key, String storeAddress) {
        return urlPrefixes(key, storeAddress, "http");
    }

    /**
     * URL prefixes ({@code <scheme>://<node>/<store>}) of {@link #nodesFor}, to which a needle path is
     * appended; {@code scheme} is {@code http} or {@code https} (the cluster's, as the caller's transport uses).
     */
    public List<String> urlPrefixes(long key, String storeAddress, String scheme) {
        if (!"http".equals(scheme) && !"https".equals(scheme)) {
            throw new IllegalArgumentException("scheme must be http or https, was '" + scheme + "'");
        }
        List<String> out = new ArrayList<>(2);
        for (String n : nodesFor(key)) {
            out.add(scheme + "://" + n + "/" + storeAddress);
        }
        return out;
    }

    public HashRing primaries() {
        return primaries;
    }

    /** The gutter ring, or null. */
    public HashRing gutter() {
        return gutter;
    }
}
