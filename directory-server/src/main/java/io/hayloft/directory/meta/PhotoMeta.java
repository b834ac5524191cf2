package io.hayloft.directory.meta;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Application metadata of one photo key: its logical volume, its cookie, the alternate keys
 * (sizes) written, and whether it was deleted. Stored in the {@code photos} column family under the
 * 8-byte big-endian key, in this binary layout (version 1):
 *
 * <table>
 * <caption>photo record, version 1</caption>
 * <tr><th>offset</th><th>size</th><th>field</th></tr>
 * <tr><td>0</td><td>1</td><td>format version, 1</td></tr>
 * <tr><td>1</td><td>1</td><td>flags: bit 0 deleted</td></tr>
 * <tr><td>2</td><td>4</td><td>logical volume id</td></tr>
 * <tr><td>6</td><td>8</td><td>cookie</td></tr>
 * <tr><td>14</td><td>2</td><td>number of alternate keys n</td></tr>
 * <tr><td>16</td><td>4n</td><td>alternate keys, ascending</td></tr>
 * </table>
 */
public record PhotoMeta(int volume, long cookie, int[] alts, boolean deleted) {

    static final byte VERSION = 1;
    static final int HEADER = 1 + 1 + 4 + 8 + 2;

    public PhotoMeta {
        alts = alts.clone();
        Arrays.sort(alts);
    }

    public boolean hasAlt(int alt) {
        return Arrays.binarySearch(alts, alt) >= 0;
    }

    public PhotoMeta withAlt(int alt) {
        if (hasAlt(alt)) {
            return this;
        }
        int[] a = Arrays.copyOf(alts, alts.length + 1);
        a[alts.length] = alt;
        return new PhotoMeta(volume, cookie, a, deleted);
    }

    public PhotoMeta asDeleted() {
        return new PhotoMeta(volume, cookie, alts, true);
    }

    byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(HEADER + 4 * alts.length);
        b.put(VERSION).put((byte) (deleted ? 1 : 0)).putInt(volume).putLong(cookie).putShort((short) alts.length);
        for (int a : alts) {
            b.putInt(a);
        }
        return b.array();
    }

    static PhotoMeta decode(long key, byte[] bytes) {
        if (bytes.length < HEADER || bytes[0] != VERSION) {
            throw new MetaStoreException("photo " + key + ": unknown record format "
                    + (bytes.length == 0 ? "(empty)" : "version " + bytes[0]) + ", this directory reads version " + VERSION);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes);
        b.get();
        boolean deleted = (b.get() & 1) != 0;
        int volume = b.getInt();
        long cookie = b.getLong();
        int n = b.getShort() & 0xffff;
        if (bytes.length != HEADER + 4 * n) {
            throw new MetaStoreException("photo " + key + ": record of " + bytes.length + " bytes, expected " + (HEADER + 4 * n));
        }
        int[] alts = new int[n];
        for (int i = 0; i < n; i++) {
            alts[i] = b.getInt();
        }
        return new PhotoMeta(volume, cookie, alts, deleted);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PhotoMeta p && p.volume == volume && p.cookie == cookie && p.deleted == deleted
                && Arrays.equals(p.alts, alts);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(cookie) * 31 + volume;
    }

    @Override
    public String toString() {
        return "PhotoMeta[volume=" + volume + ", alts=" + Arrays.toString(alts) + ", deleted=" + deleted + "]";
    }
}
