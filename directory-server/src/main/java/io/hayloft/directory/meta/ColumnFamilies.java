package io.hayloft.directory.meta;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;

/**
 * The column families of the directory database, by name: the one list of them, in the order in
 * which {@link MetaStore} opens, digests and copies them, and the open handles of one database. The
 * on-disk names below never change (RocksDB must be given every family an existing database has,
 * by its name); a family is added at the end, and opening a database that lacks it creates it empty.
 * Keys and values byte by byte: docs/formats.md "Directory database (RocksDB), format 1".
 *
 * <table>
 * <caption>column families, in order</caption>
 * <tr><th>family</th><th>holds</th></tr>
 * <tr><td>{@code default}</td><td>settings by UTF-8 name: {@code format}, {@code cluster-id}, {@code key-hwm},
 *     {@code volume-seq}, {@code delete-floor}, {@code raid-lease}, {@code raid-hold}, {@code restored-from}; in a
 *     replica of a Raft group also {@code raft-applied}, {@code raft-cluster}</td></tr>
 * <tr><td>{@code stores}</td><td>{@code StoreInfo} by store id</td></tr>
 * <tr><td>{@code volumes}</td><td>{@code VolumeInfo} by logical volume id</td></tr>
 * <tr><td>{@code photos}</td><td>legacy, unused: per-photo records of the removed {@code assign}/{@code commit} API;
 *     opened only because existing databases have it</td></tr>
 * <tr><td>{@code stripes}</td><td>{@code StripeMap} by logical volume id</td></tr>
 * <tr><td>{@code reclaims}</td><td>a pending reclaim, {@code ReclaimPlan}, by logical volume id</td></tr>
 * <tr><td>{@code deletes}</td><td>the delete logs: an entry by (volume id, sequence number)</td></tr>
 * <tr><td>{@code delete-keys}</td><td>the delete logs' index: an entry's sequence number by (volume id, photo key,
 *     cookie)</td></tr>
 * <tr><td>{@code s3-buckets}</td><td>S3 namespace ({@link NamespaceStore}): {@code Bucket} by name</td></tr>
 * <tr><td>{@code s3-objects}</td><td>{@code ObjectRecord} by (bucket, key)</td></tr>
 * <tr><td>{@code s3-uploads}</td><td>a multipart upload in progress, {@code Upload}, by (bucket, key, upload id)</td></tr>
 * <tr><td>{@code s3-parts}</td><td>an uploaded {@code Part} by (upload id, part number)</td></tr>
 * <tr><td>{@code s3-pending}</td><td>{@code Pending}: needles no key refers to yet, by pending id</td></tr>
 * <tr><td>{@code s3-inline}</td><td>the data of a small object kept inline, raw bytes, by (bucket, key) as in
 *     {@code s3-objects}</td></tr>
 * </table>
 *
 * <p>Immutable once built and thread-safe; the handles are closed by {@link #close()}, idempotently
 * (RocksDB's handles are), before their database is.
 */
final class ColumnFamilies implements AutoCloseable {

    /** A column family of the directory database, in on-disk order. */
    enum Family {
        DEFAULT("default"),
        STORES("stores"),
        VOLUMES("volumes"),
        /** Legacy, unused: opened, never read or written. */
        PHOTOS("photos"),
        STRIPES("stripes"),
        RECLAIMS("reclaims"),
        DELETES("deletes"),
        DELETE_KEYS("delete-keys"),
        S3_BUCKETS("s3-buckets"),
        S3_OBJECTS("s3-objects"),
        S3_UPLOADS("s3-uploads"),
        S3_PARTS("s3-parts"),
        S3_PENDING("s3-pending"),
        S3_INLINE("s3-inline");

        private final String name;

        Family(String name) {
            this.name = name;
        }

        /** The family's name in the database (the default family's is RocksDB's {@code default}). */
        String onDisk() {
            return name;
        }

        byte[] onDiskBytes() {
            return name.getBytes(StandardCharsets.UTF_8);
        }
    }

    /** Every family's on-disk name, in order. */
    static final List<String> NAMES = Arrays.stream(Family.values()).map(Family::onDisk).toList();

    private final Map<Family, ColumnFamilyHandle> handles = new EnumMap<>(Family.class);
    private final List<ColumnFamilyHandle> ordered;

    /**
     * The handles RocksDB opened for {@link #descriptors}, in their order.
     *
     * @throws IllegalArgumentException when there is not one handle per family
     */
    ColumnFamilies(List<ColumnFamilyHandle> opened) {
        Family[] all = Family.values();
        if (opened.size() != all.length) {
            throw new IllegalArgumentException(opened.size() + " column family handles for the " + all.length + " families " + NAMES);
        }
        for (int i = 0; i < all.length; i++) {
            handles.put(all[i], opened.get(i));
        }
        ordered = List.copyOf(opened);
    }

    /** One descriptor per family, in order, each with {@code options}: what RocksDB opens the database with. */
    static List<ColumnFamilyDescriptor> descriptors(ColumnFamilyOptions options) {
        List<ColumnFamilyDescriptor> out = new ArrayList<>();
        for (Family f : Family.values()) {
            out.add(new ColumnFamilyDescriptor(f.onDiskBytes(), options));
        }
        return out;
    }

    /** The open handle of {@code family}. */
    ColumnFamilyHandle handle(Family family) {
        return handles.get(family);
    }

    /** Every handle, in family order. */
    List<ColumnFamilyHandle> all() {
        return ordered;
    }

    @Override
    public void close() {
        for (ColumnFamilyHandle h : ordered) {
            h.close();
        }
    }
}
