package io.hayloft.directory.meta;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.directory.meta.ColumnFamilies.Family;
import io.hayloft.format.s3.Bucket;
import io.hayloft.format.s3.Listing;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Part;
import io.hayloft.format.s3.Pending;
import io.hayloft.format.s3.Upload;
import io.hayloft.format.s3.UploadListing;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

/**
 * The S3 namespace in the directory's database: the {@code s3-buckets}, {@code s3-objects},
 * {@code s3-uploads}, {@code s3-parts}, {@code s3-pending} and {@code s3-inline} column families of {@link MetaStore}
 * (keys and values in its javadoc and docs/formats.md "S3 namespace"). Reads go to RocksDB (nothing is
 * cached); a listing seeks: a common prefix is passed by seeking to the successor of the prefix with
 * its delimiter, never by reading the keys under it. Writes are one synced batch each ({@link #write}),
 * made only by the namespace {@link Change}s.
 *
 * <p>Thread-safe: RocksDB is; callers serialise their read-modify-writes (the directory's namespace lock).
 */
public final class NamespaceStore {
    /** Most keys, common prefixes or uploads in one listing page. */
    public static final int MAX_PAGE = 1000;

    private final RocksDB db;
    private final ColumnFamilyHandle buckets;
    private final ColumnFamilyHandle objects;
    private final ColumnFamilyHandle uploads;
    private final ColumnFamilyHandle parts;
    private final ColumnFamilyHandle pending;
    private final ColumnFamilyHandle inline;
    private final Supplier<MetaStore.Batch> batches;
    private final ObjectMapper json;
    private final Path path;

    NamespaceStore(RocksDB db, ColumnFamilies families, Supplier<MetaStore.Batch> batches, ObjectMapper json, Path path) {
        this.db = db;
        this.buckets = families.handle(Family.S3_BUCKETS);
        this.objects = families.handle(Family.S3_OBJECTS);
        this.uploads = families.handle(Family.S3_UPLOADS);
        this.parts = families.handle(Family.S3_PARTS);
        this.pending = families.handle(Family.S3_PENDING);
        this.inline = families.handle(Family.S3_INLINE);
        this.batches = batches;
        this.json = json;
        this.path = path;
    }

    // ------------------------------------------------------------------ reads

    public Bucket bucket(String name) {
        byte[] v = get(buckets, utf8(name));
        return v == null ? null : fromJson(v, Bucket.class);
    }

    /** Every bucket, by name. */
    public List<Bucket> buckets() {
        List<Bucket> out = new ArrayList<>();
        try (RocksIterator it = db.newIterator(buckets)) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                out.add(fromJson(it.value(), Bucket.class));
            }
            status(it);
        }
        return out;
    }

    /** The object under the key, with its inline data when it has some (a second read, of {@code s3-inline}). */
    public ObjectRecord object(String bucket, String key) {
        byte[] k = objectKey(bucket, key);
        byte[] v = get(objects, k);
        if (v == null) {
            return null;
        }
        ObjectRecord o = fromJson(v, ObjectRecord.class);
        if (!o.inlined()) {
            return o;
        }
        byte[] data = get(inline, k);
        if (data == null || data.length != o.size()) {
            throw new MetaStoreException("object '" + key + "' of bucket " + bucket + " is kept inline but s3-inline holds "
                    + (data == null ? "nothing" : data.length + " bytes") + " for it, not " + o.size() + " (" + path + ")");
        }
        return o.withInline(data);
    }

    /** Whether the bucket holds an object (one seek). */
    public boolean hasObjects(String bucket) {
        return any(objects, concat(utf8(bucket), new byte[] {0}));
    }

    /** Whether the bucket holds a multipart upload in progress (one seek). */
    public boolean hasUploads(String bucket) {
        return any(uploads, concat(utf8(bucket), new byte[] {0}));
    }

    /**
     * One page of the bucket's keys under {@code prefix} after {@code after} (exclusive, null: from the
     * first), objects and common prefixes together at most {@code max}; a common prefix is listed when
     * it sorts after {@code after}.
     */
    public Listing list(String bucket, String prefix, String delimiter, String after, int max) {
        List<ObjectRecord> found = new ArrayList<>();
        List<String> prefixes = new ArrayList<>();
        if (max <= 0) {
            return new Listing(found, prefixes, false, null);
        }
        byte[] base = concat(utf8(bucket), new byte[] {0});
        byte[] pre = utf8(prefix == null ? "" : prefix);
        byte[] from = concat(base, pre);
        byte[] delim = delimiter == null || delimiter.isEmpty() ? null : utf8(delimiter);
        byte[] afterKey = after == null ? null : utf8(after);
        byte[] start = from;
        if (afterKey != null) {
            byte[] past = concat(base, afterKey, new byte[] {0});
            if (Arrays.compareUnsigned(past, start) > 0) {
                start = past;
            }
        }
        boolean truncated = false;
        String last = null;
        try (RocksIterator it = db.newIterator(objects)) {
            it.seek(start);
            while (it.isValid() && startsWith(it.key(), from)) {
                byte[] key = Arrays.copyOfRange(it.key(), base.length, it.key().length);
                int d = delim == null ? -1 : indexOf(key, delim, pre.length);
                if (d >= 0) {
                    byte[] cp = Arrays.copyOf(key, d + delim.length);
                    if (afterKey == null || Arrays.compareUnsigned(cp, afterKey) > 0) {
                        if (found.size() + prefixes.size() == max) {
                            truncated = true;
                            break;
                        }
                        last = new String(cp, StandardCharsets.UTF_8);
                        prefixes.add(last);
                    }
                    it.seek(successor(concat(base, cp)));
                    continue;
                }
                if (found.size() + prefixes.size() == max) {
                    truncated = true;
                    break;
                }
                ObjectRecord o = fromJson(it.value(), ObjectRecord.class);
                found.add(o);
                last = o.key();
                it.next();
            }
            status(it);
        }
        return new Listing(found, prefixes, truncated, truncated ? last : null);
    }

    public Upload upload(String bucket, String key, String uploadId) {
        byte[] v = get(uploads, uploadKey(bucket, key, uploadId));
        return v == null ? null : fromJson(v, Upload.class);
    }

    /** Up to {@code max} parts of the upload numbered above {@code after}, by number. */
    public List<Part> parts(String uploadId, int after, int max) {
        List<Part> out = new ArrayList<>();
        byte[] base = concat(utf8(uploadId), new byte[] {0});
        try (RocksIterator it = db.newIterator(parts)) {
            it.seek(partKey(uploadId, Math.max(after, 0) + 1));
            for (; it.isValid() && out.size() < max && startsWith(it.key(), base); it.next()) {
                out.add(fromJson(it.value(), Part.class));
            }
            status(it);
        }
        return out;
    }

    /**
     * One page of the bucket's uploads under {@code prefix}, by key then upload id, after the markers
     * (S3's: with {@code uploadIdMarker}, the uploads of {@code keyMarker} after it and those of later
     * keys; without, the uploads of keys after {@code keyMarker}), uploads and common prefixes together
     * at most {@code max}.
     */
    public UploadListing uploads(String bucket, String prefix, String delimiter, String keyMarker, String uploadIdMarker,
                                 int max) {
        List<Upload> found = new ArrayList<>();
        List<String> prefixes = new ArrayList<>();
        if (max <= 0) {
            return new UploadListing(found, prefixes, false, null, null);
        }
        byte[] base = concat(utf8(bucket), new byte[] {0});
        byte[] pre = utf8(prefix == null ? "" : prefix);
        byte[] from = concat(base, pre);
        byte[] delim = delimiter == null || delimiter.isEmpty() ? null : utf8(delimiter);
        byte[] marker = keyMarker == null || keyMarker.isEmpty() ? null : utf8(keyMarker);
        byte[] start = from;
        if (marker != null) {
            byte[] past = uploadIdMarker == null || uploadIdMarker.isEmpty() ? concat(base, marker, new byte[] {1})
                    : concat(base, marker, new byte[] {0}, utf8(uploadIdMarker), new byte[] {0});
            if (Arrays.compareUnsigned(past, start) > 0) {
                start = past;
            }
        }
        boolean truncated = false;
        String nextKey = null;
        String nextId = null;
        try (RocksIterator it = db.newIterator(uploads)) {
            it.seek(start);
            while (it.isValid() && startsWith(it.key(), from)) {
                byte[] rest = Arrays.copyOfRange(it.key(), base.length, it.key().length);
                int sep = lastIndexOf(rest, (byte) 0);
                byte[] key = Arrays.copyOf(rest, sep);
                int d = delim == null ? -1 : indexOf(key, delim, pre.length);
                if (d >= 0) {
                    byte[] cp = Arrays.copyOf(key, d + delim.length);
                    if (marker == null || Arrays.compareUnsigned(cp, marker) > 0) {
                        if (found.size() + prefixes.size() == max) {
                            truncated = true;
                            break;
                        }
                        nextKey = new String(cp, StandardCharsets.UTF_8);
                        nextId = null;
                        prefixes.add(nextKey);
                    }
                    it.seek(successor(concat(base, cp)));
                    continue;
                }
                if (found.size() + prefixes.size() == max) {
                    truncated = true;
                    break;
                }
                Upload u = fromJson(it.value(), Upload.class);
                found.add(u);
                nextKey = u.key();
                nextId = u.uploadId();
                it.next();
            }
            status(it);
        }
        return truncated ? new UploadListing(found, prefixes, true, nextKey, nextId)
                : new UploadListing(found, prefixes, false, null, null);
    }

    /**
     * Up to {@code max} uploads of every bucket initiated before {@code before}: reads every upload in
     * progress (the sweep's call, rare; uploads in progress are few next to objects).
     */
    public List<Upload> uploadsBefore(long before, int max) {
        List<Upload> out = new ArrayList<>();
        try (RocksIterator it = db.newIterator(uploads)) {
            for (it.seekToFirst(); it.isValid() && out.size() < max; it.next()) {
                Upload u = fromJson(it.value(), Upload.class);
                if (u.initiated() < before) {
                    out.add(u);
                }
            }
            status(it);
        }
        return out;
    }

    public Pending pending(String id) {
        byte[] v = get(pending, utf8(id));
        return v == null ? null : fromJson(v, Pending.class);
    }

    /** Up to {@code max} pending records with an id after {@code after} (null: from the first), by id. */
    public List<Pending> pendings(String after, int max) {
        List<Pending> out = new ArrayList<>();
        try (RocksIterator it = db.newIterator(pending)) {
            if (after == null) {
                it.seekToFirst();
            } else {
                it.seek(concat(utf8(after), new byte[] {0}));
            }
            for (; it.isValid() && out.size() < max; it.next()) {
                out.add(fromJson(it.value(), Pending.class));
            }
            status(it);
        }
        return out;
    }

    // ------------------------------------------------------------------ writes

    /** The writes of one namespace change; {@link NamespaceStore#write} applies them in one synced batch. */
    public final class Batch {
        private final MetaStore.Batch b;

        private Batch(MetaStore.Batch b) {
            this.b = b;
        }

        public void putBucket(Bucket bucket) throws RocksDBException {
            b.put(buckets, utf8(bucket.name()), toJson(bucket));
        }

        public void deleteBucket(String name) throws RocksDBException {
            b.delete(buckets, utf8(name));
        }

        /**
         * Writes the object's record (without its inline data) to {@code s3-objects}, and its inline data
         * to {@code s3-inline}, or removes what {@code s3-inline} held for the key (the object it replaces
         * may have been inline).
         */
        public void putObject(ObjectRecord o) throws RocksDBException {
            byte[] k = objectKey(o.bucket(), o.key());
            b.put(objects, k, toJson(o.inline() == null ? o : o.withInline(null)));
            if (o.inline() != null && o.inline().length > 0) {
                b.put(inline, k, o.inline());
            } else {
                b.delete(inline, k);
            }
        }

        public void deleteObject(String bucket, String key) throws RocksDBException {
            byte[] k = objectKey(bucket, key);
            b.delete(objects, k);
            b.delete(inline, k);
        }

        public void putUpload(Upload u) throws RocksDBException {
            b.put(uploads, uploadKey(u.bucket(), u.key(), u.uploadId()), toJson(u));
        }

        /** Removes the upload and every part of it. */
        public void deleteUpload(String bucket, String key, String uploadId) throws RocksDBException {
            b.delete(uploads, uploadKey(bucket, key, uploadId));
            byte[] id = utf8(uploadId);
            b.deleteRange(parts, concat(id, new byte[] {0}), concat(id, new byte[] {1}));
        }

        public void putPart(String uploadId, Part part) throws RocksDBException {
            b.put(parts, partKey(uploadId, part.number()), toJson(part));
        }

        public void putPending(Pending p) throws RocksDBException {
            b.put(pending, utf8(p.id()), toJson(p));
        }

        public void deletePending(String id) throws RocksDBException {
            b.delete(pending, utf8(id));
        }
    }

    /** A step of a {@link Batch}. */
    public interface Writes {
        void to(Batch batch) throws RocksDBException;
    }

    /** Applies {@code writes} in one synced batch. */
    public void write(Writes writes) {
        try (MetaStore.Batch b = batches.get()) {
            writes.to(new Batch(b));
            b.write();
        } catch (RocksDBException e) {
            throw new MetaStoreException("cannot write the S3 namespace to " + path + ": " + e.getMessage(), e);
        }
    }

    // ------------------------------------------------------------------ keys

    static byte[] objectKey(String bucket, String key) {
        return concat(utf8(bucket), new byte[] {0}, utf8(key));
    }

    static byte[] uploadKey(String bucket, String key, String uploadId) {
        return concat(utf8(bucket), new byte[] {0}, utf8(key), new byte[] {0}, utf8(uploadId));
    }

    static byte[] partKey(String uploadId, int number) {
        return concat(utf8(uploadId), new byte[] {0}, ByteBuffer.allocate(4).putInt(number).array());
    }

    /**
     * The least byte string above every string that starts with {@code p}: {@code p} without its
     * trailing 0xff bytes, its last byte plus one. {@code p} here always holds a byte below 0xff (a
     * bucket name's 0x00 separator).
     */
    static byte[] successor(byte[] p) {
        int n = p.length;
        while (n > 0 && p[n - 1] == (byte) 0xff) {
            n--;
        }
        if (n == 0) {
            throw new IllegalArgumentException("no successor of a string of 0xff bytes");
        }
        byte[] s = Arrays.copyOf(p, n);
        s[n - 1]++;
        return s;
    }

    static int indexOf(byte[] a, byte[] needle, int from) {
        outer:
        for (int i = from; i <= a.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (a[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static int lastIndexOf(byte[] a, byte b) {
        for (int i = a.length - 1; i >= 0; i--) {
            if (a[i] == b) {
                return i;
            }
        }
        throw new MetaStoreException("corrupt s3-uploads key: no 0x00 before the upload id");
    }

    private static boolean startsWith(byte[] a, byte[] p) {
        return a.length >= p.length && Arrays.equals(a, 0, p.length, p, 0, p.length);
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        ByteBuffer b = ByteBuffer.allocate(n);
        for (byte[] p : parts) {
            b.put(p);
        }
        return b.array();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private boolean any(ColumnFamilyHandle cf, byte[] prefix) {
        try (RocksIterator it = db.newIterator(cf)) {
            it.seek(prefix);
            boolean found = it.isValid() && startsWith(it.key(), prefix);
            status(it);
            return found;
        }
    }

    private byte[] get(ColumnFamilyHandle cf, byte[] key) {
        try {
            return db.get(cf, key);
        } catch (RocksDBException e) {
            throw new MetaStoreException("read from " + path + " failed: " + e.getMessage(), e);
        }
    }

    private void status(RocksIterator it) {
        try {
            it.status();
        } catch (RocksDBException e) {
            throw new MetaStoreException("read of the S3 namespace in " + path + " failed: " + e.getMessage(), e);
        }
    }

    private byte[] toJson(Object o) {
        try {
            return json.writeValueAsBytes(o);
        } catch (IOException e) {
            throw new MetaStoreException("cannot serialise " + o + ": " + e.getMessage(), e);
        }
    }

    private <T> T fromJson(byte[] v, Class<T> type) {
        try {
            return json.readValue(v, type);
        } catch (IOException e) {
            throw new MetaStoreException("corrupt " + type.getSimpleName() + " record in " + path + ": " + e.getMessage(), e);
        }
    }
}
