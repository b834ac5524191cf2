package io.hayloft.client;

import io.hayloft.format.directory.VolumeState;
import java.util.List;

/**
 * What {@link HayloftClient#stat} found about a photo, from the client's cached volume map and the
 * stores (no per-photo record exists in the directory): its logical volume and that volume's state,
 * the URL prefixes a read tries in order, and its alternate keys with their sizes as a replica
 * reports them ({@code GET /<volume>/<key>?cookie=<hex>}), or for a photo of an erasure-coded
 * volume as the volume's needle index lists them once the photo was verified by reading it.
 *
 * <p>Immutable, hence thread-safe.
 *
 * @param volume the photo's logical volume
 * @param volumeState the volume's state in the map ({@link VolumeState})
 * @param places URL prefixes in read order (cache nodes, then replicas on healthy stores, then the others)
 * @param replicas addresses ({@code host:port}) of the volume's replicas, those on healthy stores first
 * @param alts the photo's live alternate keys and their sizes, in the order the store lists them
 */
public record PhotoStat(int volume, VolumeState volumeState, List<String> places, List<String> replicas, List<Alt> alts) {

    public PhotoStat {
        places = List.copyOf(places);
        replicas = List.copyOf(replicas);
        alts = List.copyOf(alts);
    }

    /**
     * One alternate key of a photo and its data size in bytes.
     *
     * @param alt the alternate key (unsigned 32-bit; print with {@link Integer#toUnsignedString(int)})
     * @param size the data size in bytes
     */
    public record Alt(int alt, long size) {
        @Override
        public String toString() {
            return Integer.toUnsignedString(alt) + ":" + size;
        }
    }
}
