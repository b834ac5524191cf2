package io.hayloft.directory.meta;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.format.directory.RaidLease;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * An entry of the directory's Raft log: one {@link Change} with what the leader knew when it made it.
 * Written by {@link #encode}, read by {@link #decode}; UTF-8 JSON (docs/formats.md "Directory log
 * entries"):
 *
 * <pre>
 * {"v": 1, "term": 7, "fence": {"epoch": 3, "now": 1767139200000} | null, "change": {"type": "putStore", ...},
 *  "request": {"id": "7f3c...", "answer": "{\"etag\": ...}"}}
 * </pre>
 *
 * <ul>
 * <li>{@code v}: the entry format, 1. A replica refuses (stops applying at) an entry of a format it
 *     does not know, rather than skip a change.</li>
 * <li>{@code term}: the Raft term of the leader that computed the change from its state. The entry
 *     is applied only when it sits in the log at that same term: a change computed by a leader that
 *     lost its leadership before the change reached the log is dropped ({@link Outcome#STALE_TERM}),
 *     because the state it was computed from may have changed under another leader. 0 in a single
 *     directory, which has no terms.</li>
 * <li>{@code fence}: for a raid-node's commit, the raid lease epoch it holds and the leader's clock
 *     when it asked; the change is applied only when the stored raid lease has that epoch, a holder,
 *     and has not run out at {@code now} ({@link Outcome#LEASE_LOST} otherwise).</li>
 * <li>{@code request} (absent when the change answers no request with an id): the client's request
 *     id ({@code Hayloft-Request-Id}) and the answer the directory gives it (its JSON body). Applying
 *     the entry records both ({@link MetaStore#recordRequest}); an entry whose id is recorded already
 *     changes nothing ({@link Outcome#REPEATED}), and the directory answers the retry with the
 *     recorded answer. An entry without the field is written exactly as before the field existed.</li>
 * </ul>
 *
 * <p>A Raft log entry's data is one entry, or a <em>pack</em> of entries that the leader queued
 * while its earlier ones were in flight ({@link #pack}, read by {@link #decodeAll}):
 *
 * <pre>
 * {"v": 2, "entries": [ENTRY, ENTRY, ...]}
 * </pre>
 *
 * <p>each {@code ENTRY} an entry of format 1 as above, applied in the pack's order exactly as if each
 * were a log entry of its own (its own term check, request id and fence). A replica that does not
 * know format 2 stops applying at the first pack, so a group packs only once every replica reads
 * packs (docs/operations.md "Rolling upgrades").
 *
 * <p>Applying reads nothing but the entry and the replica's state, so every replica reaches the same
 * outcome. Immutable; thread-safe.
 */
public record LogEntry(int v, long term, Fence fence, Change change,
                       @JsonInclude(JsonInclude.Include.NON_NULL) Request request) {

    public static final int FORMAT = 1;
    /** The format of a pack: many entries in one Raft log entry. */
    public static final int PACK_FORMAT = 2;
    private static final byte[] PACK_HEAD = ("{\"v\":" + PACK_FORMAT + ",\"entries\":[").getBytes(StandardCharsets.UTF_8);
    private static final ObjectMapper JSON = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    /** A raid-node's lease epoch and the leader's clock when the raid-node asked for the change. */
    public record Fence(long epoch, long now) {
    }

    /** The client's request id and the directory's answer to it (a JSON body). */
    public record Request(String id, String answer) {
    }

    /** What applying an entry did. */
    public enum Outcome {
        /** The change is in the state. */
        APPLIED,
        /** Computed under an earlier term than the one it was logged in: dropped; the caller retries with the new leader. */
        STALE_TERM,
        /** The raid lease it names is no longer the lease: dropped. */
        LEASE_LOST,
        /** Its request id is recorded already: a retry of a change applied before; nothing changed again. */
        REPEATED
    }

    public LogEntry(long term, Fence fence, Change change) {
        this(FORMAT, term, fence, change, null);
    }

    public LogEntry(long term, Fence fence, Change change, Request request) {
        this(FORMAT, term, fence, change, request);
    }

    public byte[] encode() {
        try {
            return JSON.writeValueAsBytes(this);
        } catch (IOException e) {
            throw new MetaStoreException("cannot serialise log entry " + this + ": " + e.getMessage(), e);
        }
    }

    /** @throws MetaStoreException for bytes that are not an entry of a known format */
    public static LogEntry decode(byte[] bytes) {
        LogEntry e;
        try {
            e = JSON.readValue(bytes, LogEntry.class);
        } catch (IOException ex) {
            throw new MetaStoreException("unreadable directory log entry: " + ex.getMessage(), ex);
        }
        if (e.v() != FORMAT || e.change() == null) {
            throw new MetaStoreException("directory log entry of format " + e.v() + " (this directory reads format " + FORMAT
                    + ")" + (e.change() == null ? " without a change" : ""));
        }
        return e;
    }

    /**
     * A Raft log entry's data, of either format, as read from the log: a single entry has {@code change}
     * (and {@code entries} null), a pack has {@code entries}.
     */
    record Envelope(int v, long term, Fence fence, Change change, Request request, List<LogEntry> entries) {
    }

    /**
     * One Raft log entry's data holding the entries {@code encoded} ({@link #encode}d, format 1), to be
     * applied in this order: the entry itself when there is one, else a pack (format 2).
     */
    public static byte[] pack(List<byte[]> encoded) {
        if (encoded.isEmpty()) {
            throw new IllegalArgumentException("a pack holds at least one entry");
        }
        if (encoded.size() == 1) {
            return encoded.get(0);
        }
        int size = PACK_HEAD.length + encoded.size() + 1;
        for (byte[] e : encoded) {
            size += e.length;
        }
        ByteBuffer out = ByteBuffer.allocate(size).put(PACK_HEAD);
        for (int i = 0; i < encoded.size(); i++) {
            if (i > 0) {
                out.put((byte) ',');
            }
            out.put(encoded.get(i));
        }
        return out.put((byte) ']').put((byte) '}').array();
    }

    /**
     * The entries of one Raft log entry's data, in the order they are applied: one for an entry of
     * format 1, those of a pack (format 2).
     *
     * @throws MetaStoreException for bytes that are neither, an empty pack, or a pack holding an entry
     *         that is not of format 1 with a change
     */
    public static List<LogEntry> decodeAll(byte[] bytes) {
        Envelope e;
        try {
            e = JSON.readValue(bytes, Envelope.class);
        } catch (IOException ex) {
            throw new MetaStoreException("unreadable directory log entry: " + ex.getMessage(), ex);
        }
        if (e.v() == PACK_FORMAT) {
            if (e.entries() == null || e.entries().isEmpty()) {
                throw new MetaStoreException("directory log pack without entries");
            }
            for (LogEntry x : e.entries()) {
                if (x == null || x.v() != FORMAT || x.change() == null) {
                    throw new MetaStoreException("directory log pack holding an entry that is not of format " + FORMAT + " with a change");
                }
            }
            return e.entries();
        }
        if (e.v() != FORMAT || e.change() == null) {
            throw new MetaStoreException("directory log entry of format " + e.v() + " (this directory reads formats " + FORMAT + " and "
                    + PACK_FORMAT + ")" + (e.v() == FORMAT && e.change() == null ? " without a change" : ""));
        }
        return List.of(new LogEntry(e.v(), e.term(), e.fence(), e.change(), e.request()));
    }

    /**
     * What applying an entry did, and the change's value when applied (a new delete-log head for
     * {@link Change.AppendDeletes}, else 0). A Raft replica answers it to the leader's waiting request as
     * {@link #encode} (9 bytes: the outcome's ordinal, then the value as a big-endian long); it only
     * travels inside the process that asked, never to disk.
     */
    public record Applied(Outcome outcome, long value) {
        public static final Applied STALE = new Applied(Outcome.STALE_TERM, 0);
        public static final Applied LOST = new Applied(Outcome.LEASE_LOST, 0);
        public static final Applied REPEATED = new Applied(Outcome.REPEATED, 0);

        public byte[] encode() {
            return ByteBuffer.allocate(9).put((byte) outcome.ordinal()).putLong(value).array();
        }

        /** The answers of a pack's entries, in its order: each {@link #encode}d, back to back. */
        public static byte[] encodeAll(List<Applied> all) {
            ByteBuffer out = ByteBuffer.allocate(9 * all.size());
            for (Applied a : all) {
                out.put(a.encode());
            }
            return out.array();
        }

        /** Reads {@link #encodeAll}'s answers (a single entry's answer is a list of one). */
        public static List<Applied> decodeAll(byte[] b) {
            if (b.length == 0 || b.length % 9 != 0) {
                throw new MetaStoreException("unreadable answer of the directory's state machine (" + b.length + " bytes)");
            }
            List<Applied> out = new ArrayList<>(b.length / 9);
            for (int i = 0; i < b.length; i += 9) {
                out.add(decode(Arrays.copyOfRange(b, i, i + 9)));
            }
            return out;
        }

        public static Applied decode(byte[] b) {
            if (b.length != 9 || b[0] < 0 || b[0] >= Outcome.values().length) {
                throw new MetaStoreException("unreadable answer of the directory's state machine (" + b.length + " bytes)");
            }
            ByteBuffer buf = ByteBuffer.wrap(b);
            return new Applied(Outcome.values()[buf.get()], buf.getLong());
        }
    }

    /** Applies the entry to {@code meta}, logged at Raft term {@code logTerm} (0 in a single directory). */
    public Applied apply(MetaStore meta, long logTerm) {
        if (term != logTerm) {
            return Applied.STALE;
        }
        if (request != null && meta.requestAnswer(request.id()) != null) {
            return Applied.REPEATED;
        }
        if (fence != null && !leaseHolds(meta, fence)) {
            return Applied.LOST;
        }
        long value = change.apply(meta);
        if (request != null) {
            meta.recordRequest(request.id(), request.answer());
        }
        return new Applied(Outcome.APPLIED, value);
    }

    /** Whether the stored raid lease has {@code fence}'s epoch, a holder, and runs past {@code fence.now}. */
    public static boolean leaseHolds(MetaStore meta, Fence fence) {
        byte[] v = meta.setting(RAID_LEASE);
        if (v == null) {
            return false;
        }
        try {
            RaidLease l = JSON.readValue(v, RaidLease.class);
            return l.holder() != null && l.epoch() == fence.epoch() && l.expiresMillis() > fence.now();
        } catch (IOException e) {
            throw new MetaStoreException("corrupt raid-lease record in " + meta.path() + ": " + e.getMessage(), e);
        }
    }

    /** The default family's record of the raid lease ({@code RaidLease} as JSON). */
    public static final String RAID_LEASE = "raid-lease";
}
