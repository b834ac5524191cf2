package io.hayloft.directory;

import io.hayloft.directory.meta.Change;
import io.hayloft.directory.meta.NamespaceStore;
import io.hayloft.format.errors.DirectoryErrors;
import io.hayloft.format.s3.Bucket;
import io.hayloft.format.s3.Chunk;
import io.hayloft.format.s3.Listing;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Part;
import io.hayloft.format.s3.Pending;
import io.hayloft.format.s3.Replaced;
import io.hayloft.format.s3.Upload;
import io.hayloft.format.s3.UploadListing;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The S3 namespace the gateway keeps in the directory (docs/directory-api.md "S3 namespace"): buckets,
 * objects, multipart uploads and pending records, in the {@code s3-*} families of the directory's
 * database ({@link NamespaceStore}).
 *
 * <p>Every change is computed on the leader between {@link ChangeLog#begin()} and the commit of one
 * typed {@link Change} (times, ids, the DOOMED record, how the bucket's counters move), holding the
 * latches of the records it reads and writes (its key, its multipart upload, the pending record it
 * takes) and its bucket's latch shared, so a condition (If-Match, If-None-Match: *, a part's ETag, a
 * pending record still WRITING) is checked against the state the change is applied to: of racing
 * conditional writers exactly one wins. A bucket's counters move by the amounts each change carries
 * ({@link Change.Counts}), so changes to different keys, of one bucket or of many, are in flight at
 * the same time and share Raft rounds (and packs); creating or deleting a bucket holds its latch alone. Each change is its request's answering commit
 * ({@link ChangeLog.Writer#commit}): with a request id, a retry applies once.
 * Reads take no latch; over HTTP they pass the log's read barrier first (the HTTP layer does it).
 *
 * <p>Thread-safe: changes are ordered by latches of the namespace's own (it shares no record with
 * stores and volumes, so a heartbeat never waits for a put).
 */
public final class Namespace {
    /** S3's smallest part that is not the last one of a completed upload. */
    public static final long MIN_PART = 5L << 20;
    /** Highest part number. */
    public static final int MAX_PART = 10_000;
    /** Longest key in UTF-8 bytes. */
    public static final int MAX_KEY = 1024;
    /** Most bytes of an object kept inline (docs/s3.md "Small objects inline"). */
    public static final int MAX_INLINE = 64 * 1024;
    private static final Pattern BUCKET = Pattern.compile("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]");

    private final Directory directory;
    private final NamespaceStore ns;
    private final Clock clock;
    private final SecureRandom random = new SecureRandom();
    /** The namespace's own latches: it shares no record with stores and volumes, so a heartbeat never waits for a put. */
    private final Latches latches = new Latches();

    Namespace(Directory directory, Clock clock) {
        this.directory = directory;
        this.ns = directory.meta().namespace();
        this.clock = clock;
    }

    // ------------------------------------------------------------------ buckets

    public Bucket createBucket(String name, String region) {
        if (name == null || !BUCKET.matcher(name).matches() || name.contains("..")) {
            throw Refusal.invalid("a bucket name is 3 to 63 characters of a-z, 0-9, '.' and '-', starting and ending "
                    + "with a letter or digit, was '" + name + "'");
        }
        try (Latches.Held held = latches.whole(bucketLatch(name))) {
            ChangeLog.Writer w = begin();
            if (ns.bucket(name) != null) {
                throw DirectoryErrors.BUCKET_EXISTS.exception("bucket " + name + " exists");
            }
            Bucket b = new Bucket(name, clock.millis(), region, 0, 0, 0);
            return w.commit(List.of(new Change.S3PutBucket(b)), b);
        }
    }

    public Bucket bucket(String name) {
        Bucket b = ns.bucket(name);
        if (b == null) {
            throw DirectoryErrors.NO_SUCH_BUCKET.exception("no bucket " + name);
        }
        return b;
    }

    public List<Bucket> buckets() {
        return ns.buckets();
    }

    public void deleteBucket(String name) {
        try (Latches.Held held = latches.whole(bucketLatch(name))) {
            ChangeLog.Writer w = begin();
            bucket(name);
            if (ns.hasObjects(name) || ns.hasUploads(name)) {
                throw DirectoryErrors.BUCKET_NOT_EMPTY.exception("bucket " + name + " still holds objects or multipart uploads");
            }
            w.commit(List.of(new Change.S3DeleteBucket(name)), Map.of());
        }
    }

    // ------------------------------------------------------------------ objects

    public ObjectRecord object(String bucket, String key) {
        bucket(bucket);
        checkKey(key);
        ObjectRecord o = ns.object(bucket, key);
        if (o == null) {
            throw DirectoryErrors.NO_SUCH_KEY.exception("no key '" + key + "' in bucket " + bucket);
        }
        return o;
    }

    /**
     * Commits {@code object} if the condition holds, removing WRITING record {@code pending} (null:
     * none). An object with inline data (at most {@link #MAX_INLINE} bytes, no chunks) is kept in the
     * directory whole.
     */
    public Replaced putObject(ObjectRecord object, String pending, String ifMatch, boolean ifNoneMatch) {
        checkKey(object.key());
        if (object.etag() == null) {
            throw Refusal.invalid("an object needs its etag");
        }
        checkData(object);
        try (Latches.Held held = latches.within(bucketLatch(object.bucket()), keyLatches(object.bucket(), object.key(), pending))) {
            ChangeLog.Writer w = begin();
            bucket(object.bucket());
            ObjectRecord current = ns.object(object.bucket(), object.key());
            if (repeated(pending, current == null ? null : current.chunks(), object.chunks())) {
                return new Replaced(current, null);
            }
            Pending p = writing(pending);
            checkCondition(current, ifMatch, ifNoneMatch, object);
            ObjectRecord o = object.withModified(clock.millis());
            Pending doomed = doomed(o.chunks(), current == null ? List.of() : current.chunks(), p == null ? List.of() : p.chunks());
            return w.commit(List.of(new Change.S3PutObjectCounted(o.bucket(), counts(current, o, 0), o, pending, doomed)),
                    new Replaced(o.withInline(null), doomed == null ? null : doomed.id()));
        }
    }

    /** Removes the key if {@code ifMatch} holds (null: always); an absent key is no error. */
    public Replaced deleteObject(String bucket, String key, String ifMatch) {
        checkKey(key);
        try (Latches.Held held = latches.within(bucketLatch(bucket), List.of(keyLatch(bucket, key)))) {
            ChangeLog.Writer w = begin();
            bucket(bucket);
            ObjectRecord current = ns.object(bucket, key);
            if (current == null && ifMatch == null) {
                return new Replaced(null, null);
            }
            checkCondition(current, ifMatch, false, null);
            Pending doomed = doomed(List.of(), current.chunks());
            Change.Counts counts = new Change.Counts(-1, -current.size(), 0);
            return w.commit(List.of(new Change.S3DeleteObjectCounted(bucket, counts, key, doomed)),
                    new Replaced(current.withInline(null), doomed == null ? null : doomed.id()));
        }
    }

    public Listing list(String bucket, String prefix, String delimiter, String after, int max) {
        bucket(bucket);
        return ns.list(bucket, prefix, delimiter, after, pageSize(max));
    }

    // ------------------------------------------------------------------ multipart uploads

    public Upload createUpload(Upload upload) {
        checkKey(upload.key());
        try (Latches.Held held = latches.within(bucketLatch(upload.bucket()), List.of())) {
            ChangeLog.Writer w = begin();
            bucket(upload.bucket());
            Upload u = new Upload(upload.bucket(), upload.key(), newId(), clock.millis(), upload.contentType(), upload.headers(),
                    upload.metadata(), upload.checksumAlgorithm(), upload.checksumType());
            return w.commit(List.of(new Change.S3PutUploadCounted(u.bucket(), new Change.Counts(0, 0, 1), u)), u);
        }
    }

    public Upload upload(String bucket, String key, String uploadId) {
        checkKey(key);
        Upload u = uploadId == null ? null : ns.upload(bucket, key, uploadId);
        if (u == null) {
            throw DirectoryErrors.NO_SUCH_UPLOAD.exception("no multipart upload " + uploadId + " of key '" + key + "' in bucket " + bucket);
        }
        return u;
    }

    /** Records a part, removing WRITING record {@code pending} (null: none); the part it replaces is doomed. */
    public Replaced putPart(String bucket, String key, String uploadId, Part part, String pending) {
        if (part.number() < 1 || part.number() > MAX_PART) {
            throw Refusal.invalid("a part number is in 1.." + MAX_PART + ", was " + part.number());
        }
        if (part.etag() == null) {
            throw Refusal.invalid("a part needs its etag");
        }
        checkChunks(part.chunks(), part.size(), "part");
        List<Object> keys = pending == null ? List.of(uploadLatch(uploadId)) : List.of(uploadLatch(uploadId), pendingLatch(pending));
        try (Latches.Held held = latches.within(bucketLatch(bucket), keys)) {
            ChangeLog.Writer w = begin();
            upload(bucket, key, uploadId);
            List<Part> old = ns.parts(uploadId, part.number() - 1, 1);
            Part replaced = old.isEmpty() || old.get(0).number() != part.number() ? null : old.get(0);
            if (repeated(pending, replaced == null ? null : replaced.chunks(), part.chunks())) {
                return new Replaced(null, null);
            }
            Pending p = writing(pending);
            Part stamped = new Part(part.number(), part.size(), part.etag(), part.chunks(), part.checksums(), clock.millis());
            Pending doomed = doomed(stamped.chunks(), replaced == null ? List.of() : replaced.chunks(),
                    p == null ? List.of() : p.chunks());
            return w.commit(List.of(new Change.S3PutPart(uploadId, stamped, pending, doomed)),
                    new Replaced(null, doomed == null ? null : doomed.id()));
        }
    }

    public List<Part> parts(String bucket, String key, String uploadId, int after, int max) {
        upload(bucket, key, uploadId);
        return ns.parts(uploadId, after, pageSize(max));
    }

    /**
     * Completes the upload: {@code parts} (number and ETag) must be stored parts, in ascending order;
     * the object's chunks, size and part sizes are those of the stored parts (its ETag, checksums and
     * headers the caller's; content type, headers and metadata fall back to the upload's).
     */
    public Replaced complete(String uploadId, ObjectRecord object, List<Part> parts, String ifMatch, boolean ifNoneMatch) {
        checkKey(object.key());
        if (parts == null || parts.isEmpty()) {
            throw Refusal.invalid("a completion names at least one part");
        }
        if (object.etag() == null) {
            throw Refusal.invalid("an object needs its etag");
        }
        if (object.inline() != null) {
            throw Refusal.invalid("a completed multipart upload is made of its parts' chunks, never inline");
        }
        List<Object> keys = List.of(keyLatch(object.bucket(), object.key()), uploadLatch(uploadId));
        try (Latches.Held held = latches.within(bucketLatch(object.bucket()), keys)) {
            ChangeLog.Writer w = begin();
            bucket(object.bucket());
            Upload u = upload(object.bucket(), object.key(), uploadId);
            Map<Integer, Part> stored = new HashMap<>();
            for (Part p : ns.parts(uploadId, 0, MAX_PART + 1)) {
                stored.put(p.number(), p);
            }
            List<Part> chosen = new ArrayList<>();
            for (Part named : parts) {
                Part s = stored.get(named.number());
                if (s == null || named.etag() == null || !unquote(named.etag()).equals(s.etag())) {
                    throw DirectoryErrors.INVALID_PART.exception("part " + named.number() + " with ETag " + named.etag()
                            + " is not uploaded to upload " + uploadId);
                }
                if (!chosen.isEmpty() && chosen.get(chosen.size() - 1).number() >= s.number()) {
                    throw DirectoryErrors.INVALID_PART.exception("parts must be named in ascending order; " + s.number()
                            + " follows " + chosen.get(chosen.size() - 1).number());
                }
                chosen.add(s);
            }
            for (int i = 0; i < chosen.size() - 1; i++) {
                if (chosen.get(i).size() < MIN_PART) {
                    throw DirectoryErrors.ENTITY_TOO_SMALL.exception("part " + chosen.get(i).number() + " is " + chosen.get(i).size()
                            + " bytes; every part but the last must be at least " + MIN_PART);
                }
            }
            ObjectRecord current = ns.object(object.bucket(), object.key());
            checkCondition(current, ifMatch, ifNoneMatch, object);
            List<Chunk> chunks = new ArrayList<>();
            List<Long> sizes = new ArrayList<>();
            long size = 0;
            for (Part p : chosen) {
                chunks.addAll(p.chunks());
                sizes.add(p.size());
                size += p.size();
            }
            ObjectRecord o = new ObjectRecord(object.bucket(), object.key(), size, unquote(object.etag()), chunks, sizes,
                    object.checksums(), object.checksumType(), object.contentType() != null ? object.contentType() : u.contentType(),
                    object.headers().isEmpty() ? u.headers() : object.headers(),
                    object.metadata().isEmpty() ? u.metadata() : object.metadata(), clock.millis());
            List<Chunk> left = new ArrayList<>();
            Set<Integer> taken = new HashSet<>();
            chosen.forEach(p -> taken.add(p.number()));
            stored.values().stream().filter(p -> !taken.contains(p.number())).forEach(p -> left.addAll(p.chunks()));
            Pending doomed = doomed(o.chunks(), left, current == null ? List.of() : current.chunks());
            return w.commit(List.of(new Change.S3CompleteCounted(o.bucket(), counts(current, o, -1), o, uploadId, doomed)),
                    new Replaced(o, doomed == null ? null : doomed.id()));
        }
    }

    /** Aborts the upload; every part's chunks go to a DOOMED record. */
    public Replaced abort(String bucket, String key, String uploadId) {
        try (Latches.Held held = latches.within(bucketLatch(bucket), List.of(uploadLatch(uploadId)))) {
            ChangeLog.Writer w = begin();
            bucket(bucket);
            upload(bucket, key, uploadId);
            List<Chunk> chunks = new ArrayList<>();
            ns.parts(uploadId, 0, MAX_PART + 1).forEach(p -> chunks.addAll(p.chunks()));
            Pending doomed = doomed(List.of(), chunks);
            return w.commit(List.of(new Change.S3DeleteUploadCounted(bucket, new Change.Counts(0, 0, -1), key, uploadId, doomed)),
                    new Replaced(null, doomed == null ? null : doomed.id()));
        }
    }

    public UploadListing uploads(String bucket, String prefix, String delimiter, String keyMarker, String uploadIdMarker, int max) {
        bucket(bucket);
        return ns.uploads(bucket, prefix, delimiter, keyMarker, uploadIdMarker, pageSize(max));
    }

    public List<Upload> uploadsBefore(long before, int max) {
        return ns.uploadsBefore(before, pageSize(max));
    }

    // ------------------------------------------------------------------ pending records

    /** Appends {@code chunks} to WRITING record {@code id}, or makes one (id null); answers its id. */
    public String pend(String id, List<Chunk> chunks) {
        List<Chunk> add = chunks == null ? List.of() : chunks;
        checkChunks(add, add.stream().mapToLong(Chunk::size).sum(), "pending record");
        try (Latches.Held held = latches.shared(id == null ? List.of() : List.of(pendingLatch(id)))) {
            ChangeLog.Writer w = begin();
            Pending p;
            if (id == null) {
                p = new Pending(newId(), Pending.WRITING, add, clock.millis());
            } else {
                Pending old = writing(id);
                List<Chunk> all = new ArrayList<>(old.chunks());
                all.addAll(add);
                p = new Pending(id, Pending.WRITING, all, old.created());
            }
            return w.commit(List.of(new Change.S3Pend(p)), new PendAnswer(p.id())).id();
        }
    }

    /** A WRITING record becomes DOOMED; nothing when it is DOOMED already or gone. */
    public void doom(String id) {
        try (Latches.Held held = latches.shared(pendingLatch(id))) {
            ChangeLog.Writer w = begin();
            Pending p = ns.pending(id);
            if (p != null && Pending.WRITING.equals(p.state())) {
                w.commit(List.of(new Change.S3Doom(new Pending(id, Pending.DOOMED, p.chunks(), p.created()))), Map.of());
            }
        }
    }

    /** Drops a DOOMED record; nothing when it is gone. WRONG_STATE for a WRITING one (doom it first). */
    public void drop(String id) {
        try (Latches.Held held = latches.shared(pendingLatch(id))) {
            ChangeLog.Writer w = begin();
            Pending p = ns.pending(id);
            if (p == null) {
                return;
            }
            if (!Pending.DOOMED.equals(p.state())) {
                throw DirectoryErrors.WRONG_STATE.exception("pending record " + id + " is " + p.state()
                        + ": only a DOOMED record is dropped (doom it first)");
            }
            w.commit(List.of(new Change.S3Drop(id)), Map.of());
        }
    }

    /** Pending record {@code id}; PENDING_GONE when there is none. */
    public Pending pending(String id) {
        Pending p = ns.pending(id);
        if (p == null) {
            throw DirectoryErrors.PENDING_GONE.exception("no pending record " + id);
        }
        return p;
    }

    public List<Pending> pendings(String after, int max) {
        return ns.pendings(after, pageSize(max));
    }

    // ------------------------------------------------------------------ helpers

    /**
     * Whether a commit of {@code chunks} taking pending record {@code pending} was applied already: the
     * record is gone and the key (or part) holds exactly these chunks (needles are never written
     * twice, so no other commit holds them). A caller that repeats a commit whose answer it lost (a
     * timeout, a leader change) gets the first one's success, not PENDING_GONE.
     */
    /** The answer of {@code POST /v1/s3/pending}: the record's id. */
    public record PendAnswer(String id) {
    }

    /**
     * Begins a change holding its latches: a request whose id was applied while it waited for them (a
     * retry racing its first attempt) stops here, before its conditions are checked against a state
     * that already holds its own change, and is answered with the first answer.
     */
    private ChangeLog.Writer begin() {
        ChangeLog.Writer w = directory.log().begin();
        RequestScope.checkNotApplied(directory.meta());
        return w;
    }

    private static Object bucketLatch(String bucket) {
        return "bucket/" + bucket;
    }

    private static Object pendingLatch(String id) {
        return "pending/" + id;
    }

    private static Object keyLatch(String bucket, String key) {
        return "key/" + bucket + "/" + key;
    }

    private static Object uploadLatch(String uploadId) {
        return "upload/" + uploadId;
    }

    /** The latches of a change to {@code key} that also takes WRITING record {@code pending} (null: none). */
    private static List<Object> keyLatches(String bucket, String key, String pending) {
        return pending == null ? List.of(keyLatch(bucket, key)) : List.of(keyLatch(bucket, key), pendingLatch(pending));
    }

    private boolean repeated(String pending, List<Chunk> stored, List<Chunk> chunks) {
        return pending != null && stored != null && !chunks.isEmpty() && stored.equals(chunks) && ns.pending(pending) == null;
    }

    /** The WRITING record {@code id} (null for a null id); PENDING_GONE when it is gone or doomed. */
    private Pending writing(String id) {
        if (id == null) {
            return null;
        }
        Pending p = ns.pending(id);
        if (p == null || !Pending.WRITING.equals(p.state())) {
            throw DirectoryErrors.PENDING_GONE.exception("pending record " + id + (p == null ? " is gone" : " is " + p.state())
                    + " (the sweep took it); nothing was changed");
        }
        return p;
    }

    /**
     * If-None-Match: * fails when there is an object; If-Match (a list of ETags, quoted or not, or *)
     * fails when none names the current object's; with no current object it is NO_SUCH_KEY (S3's 404).
     */
    private static void checkCondition(ObjectRecord current, String ifMatch, boolean ifNoneMatch, ObjectRecord target) {
        if (ifNoneMatch && current != null) {
            throw DirectoryErrors.PRECONDITION_FAILED.exception("If-None-Match: * and key '" + current.key() + "' exists");
        }
        if (ifMatch == null) {
            return;
        }
        if (current == null) {
            throw DirectoryErrors.NO_SUCH_KEY.exception("If-Match and no object of key '" + (target == null ? "" : target.key()) + "'");
        }
        for (String t : ifMatch.split(",")) {
            String tag = unquote(t.trim());
            if (tag.equals("*") || tag.equals(current.etag())) {
                return;
            }
        }
        throw DirectoryErrors.PRECONDITION_FAILED.exception("If-Match " + ifMatch + " and key '" + current.key() + "' has ETag "
                + current.etag());
    }

    /**
     * A DOOMED record of the chunks in {@code lists} that {@code kept} does not hold (null when none
     * is left): a needle the committed record refers to is never freed.
     */
    @SafeVarargs
    private Pending doomed(List<Chunk> kept, List<Chunk>... lists) {
        Set<Chunk> keep = new HashSet<>(kept);
        List<Chunk> out = new ArrayList<>();
        Set<Chunk> seen = new HashSet<>();
        for (List<Chunk> l : lists) {
            for (Chunk c : l) {
                if (!keep.contains(c) && seen.add(c)) {
                    out.add(c);
                }
            }
        }
        return out.isEmpty() ? null : new Pending(newId(), Pending.DOOMED, out, clock.millis());
    }

    /** How the bucket's counters move when {@code o} takes the place of {@code current}, with {@code uploads} more uploads. */
    private static Change.Counts counts(ObjectRecord current, ObjectRecord o, int uploads) {
        return new Change.Counts(current == null ? 1 : 0, o.size() - (current == null ? 0 : current.size()), uploads);
    }

    private static void checkKey(String key) {
        if (key == null || key.isEmpty() || key.indexOf('\0') >= 0 || key.getBytes(StandardCharsets.UTF_8).length > MAX_KEY) {
            throw Refusal.invalid("a key is 1 to " + MAX_KEY + " bytes of UTF-8 without U+0000");
        }
    }

    /** An object's data: chunks whose sizes add up to its size, or inline data of its size (at most {@link #MAX_INLINE}). */
    private static void checkData(ObjectRecord o) {
        if (o.inline() == null) {
            checkChunks(o.chunks(), o.size(), "object");
            return;
        }
        if (!o.chunks().isEmpty() || !o.partSizes().isEmpty()) {
            throw Refusal.invalid("an object with inline data has no chunks and no parts");
        }
        if (o.inline().length != o.size() || o.size() > MAX_INLINE) {
            throw Refusal.invalid("inline data is the object's whole data, at most " + MAX_INLINE + " bytes; the object's size is "
                    + o.size() + " and " + o.inline().length + " bytes came inline");
        }
    }

    private static void checkChunks(List<Chunk> chunks, long size, String what) {
        long sum = 0;
        for (Chunk c : chunks) {
            if (c.size() < 1) {
                throw Refusal.invalid("a chunk holds at least 1 byte, was " + c.size());
            }
            sum += c.size();
        }
        if (sum != size) {
            throw Refusal.invalid("the " + what + "'s size " + size + " is not the sum of its chunks' sizes " + sum);
        }
    }

    private static int pageSize(int max) {
        if (max < 0) {
            throw Refusal.invalid("max must be >= 0, was " + max);
        }
        return Math.min(max, NamespaceStore.MAX_PAGE);
    }

    private static String unquote(String etag) {
        return etag.length() >= 2 && etag.startsWith("\"") && etag.endsWith("\"") ? etag.substring(1, etag.length() - 1) : etag;
    }

    /** 16 random bytes, URL-safe base64 without padding (22 characters). */
    private String newId() {
        byte[] b = new byte[16];
        random.nextBytes(b);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }
}
