package io.hayloft.cli.chaos;

import io.hayloft.format.wire.PhotoId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The reference model of the life-cycle checker: for every needle (key, alternate key) ever
 * written, what a read through the client may return. A needle is
 * <ul>
 *   <li><b>exact</b>: one value, never absent (an acknowledged put or overwrite);</li>
 *   <li><b>deleted</b>: no value, absent (an acknowledged delete);</li>
 *   <li><b>in doubt</b>: several candidate values and/or absent (a put, overwrite or delete whose
 *       outcome was an error or a timeout). Every read must return one of the candidates or
 *       not-found, never other bytes.</li>
 * </ul>
 * Candidates are never narrowed by what a read saw: a half-done write may leave replicas that
 * disagree, and a read may legitimately see either.
 *
 * <p>Not thread-safe: one checker thread owns it.
 */
final class Model {

    /** One needle: its id and what may be read. */
    static final class Needle {
        final PhotoId id;
        final List<byte[]> values = new ArrayList<>(1);
        boolean mayBeAbsent;

        Needle(PhotoId id) {
            this.id = id;
        }

        boolean exact() {
            return values.size() == 1 && !mayBeAbsent;
        }

        boolean deleted() {
            return values.isEmpty();
        }

        boolean inDoubt() {
            return !exact() && !deleted();
        }

        boolean matches(byte[] read) {
            for (byte[] v : values) {
                if (Arrays.equals(v, read)) {
                    return true;
                }
            }
            return false;
        }

        String describe() {
            if (exact()) {
                return "exact " + values.get(0).length + " bytes";
            }
            if (deleted()) {
                return "deleted";
            }
            StringBuilder b = new StringBuilder("in doubt: ");
            for (byte[] v : values) {
                b.append(v.length).append(" bytes | ");
            }
            return b.append(mayBeAbsent ? "absent" : "(not absent)").toString();
        }
    }

    /** One photo (a key): its volume, cookie and alternates. */
    static final class Photo {
        final long key;
        final int volume;
        final long cookie;
        final Map<Integer, Needle> alts = new LinkedHashMap<>();

        Photo(long key, int volume, long cookie) {
            this.key = key;
            this.volume = volume;
            this.cookie = cookie;
        }

        boolean allDeleted() {
            return alts.values().stream().allMatch(Needle::deleted);
        }
    }

    private final TreeMap<Long, Photo> photos = new TreeMap<>();
    private long needles;

    /** Records a needle written (acknowledged: exact; else in doubt between the value and absent). */
    Needle put(PhotoId id, byte[] data, boolean acknowledged) {
        Photo p = photos.computeIfAbsent(id.key(), k -> new Photo(k, id.volume(), id.cookie()));
        Needle n = p.alts.get(id.alt());
        if (n == null) {
            n = new Needle(id);
            p.alts.put(id.alt(), n);
            needles++;
            n.mayBeAbsent = true;
        }
        if (acknowledged) {
            n.values.clear();
            n.mayBeAbsent = false;
        }
        n.values.add(data);
        return n;
    }

    /** An overwrite of a needle: acknowledged, it is exactly {@code data}; else {@code data} joins its candidates. */
    void overwrite(Needle n, byte[] data, boolean acknowledged) {
        if (acknowledged) {
            n.values.clear();
            n.mayBeAbsent = false;
        }
        n.values.add(data);
    }

    /** A delete of a whole photo: acknowledged, every alternate is deleted; else each may also be absent. */
    void delete(Photo p, boolean acknowledged) {
        for (Needle n : p.alts.values()) {
            if (acknowledged) {
                n.values.clear();
            }
            n.mayBeAbsent = true;
        }
    }

    Collection<Photo> photos() {
        return photos.values();
    }

    Photo photo(long key) {
        return photos.get(key);
    }

    /** Every needle, in key then alternate order. */
    List<Needle> needles() {
        List<Needle> out = new ArrayList<>();
        for (Photo p : photos.values()) {
            out.addAll(p.alts.values());
        }
        return out;
    }

    /** Needles ever recorded (each counted once). */
    long needleCount() {
        return needles;
    }

    /** Photos that still have something that must or may read back. */
    List<Photo> livePhotos() {
        List<Photo> out = new ArrayList<>();
        for (Photo p : photos.values()) {
            if (!p.allDeleted()) {
                out.add(p);
            }
        }
        return out;
    }
}
