package io.hayloft.directory.meta;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import io.hayloft.directory.meta.MetaStore.DeleteRecord;
import io.hayloft.format.directory.ReclaimPlan;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.s3.Bucket;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Part;
import io.hayloft.format.s3.Pending;
import io.hayloft.format.s3.Upload;
import io.hayloft.format.wire.StripeMap;
import java.util.List;

/**
 * One change of the directory's state: the body of a {@link LogEntry}. Every write the directory
 * makes to its {@link MetaStore} is one of these, whether a single directory applies it at once or a
 * Raft group applies it from its log on every replica (docs/formats.md "Directory log entries").
 *
 * <p>Each change carries every value it writes, computed by the leader (times, ids, sequence
 * numbers, counters): {@link #apply} reads no clock, random source or network, so every replica that
 * applies the same entries in the same order holds the same state. Each entry is applied exactly once:
 * its records and the replica's applied index reach RocksDB in one batch ({@link MetaStore#applyEntry}).
 * The {@code s3...Counted} changes move a bucket's counters by the amounts they carry, reading the
 * bucket as the entries before them left it, so that changes to different keys of one bucket need not
 * wait for each other on the leader (docs/formats.md "Directory log entries").
 *
 * <p>The JSON of each change names its kind in {@code type}; the names and fields never change
 * meaning (a new kind of change is a new name). A field a replica does not know is ignored; a
 * {@code type} it does not know makes it refuse the entry ({@link LogEntry#decode}), so every replica
 * knows a new change before a leader writes one. Immutable records; thread-safe.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
        @JsonSubTypes.Type(value = Change.PutStore.class, name = "putStore"),
        @JsonSubTypes.Type(value = Change.PutVolume.class, name = "putVolume"),
        @JsonSubTypes.Type(value = Change.PutVolumeAndStripes.class, name = "putVolumeAndStripes"),
        @JsonSubTypes.Type(value = Change.PutStripeMap.class, name = "putStripeMap"),
        @JsonSubTypes.Type(value = Change.PutReclaim.class, name = "putReclaim"),
        @JsonSubTypes.Type(value = Change.DeleteReclaim.class, name = "deleteReclaim"),
        @JsonSubTypes.Type(value = Change.SwapStripes.class, name = "swapStripes"),
        @JsonSubTypes.Type(value = Change.AppendDeletes.class, name = "appendDeletes"),
        @JsonSubTypes.Type(value = Change.RaiseCounters.class, name = "raiseCounters"),
        @JsonSubTypes.Type(value = Change.RaiseDeleteFloor.class, name = "raiseDeleteFloor"),
        @JsonSubTypes.Type(value = Change.PutSetting.class, name = "putSetting"),
        @JsonSubTypes.Type(value = Change.DeleteSetting.class, name = "deleteSetting"),
        @JsonSubTypes.Type(value = Change.InitCluster.class, name = "initCluster"),
        @JsonSubTypes.Type(value = Change.Batch.class, name = "batch"),
        @JsonSubTypes.Type(value = Change.S3PutBucket.class, name = "s3PutBucket"),
        @JsonSubTypes.Type(value = Change.S3DeleteBucket.class, name = "s3DeleteBucket"),
        @JsonSubTypes.Type(value = Change.S3PutObject.class, name = "s3PutObject"),
        @JsonSubTypes.Type(value = Change.S3DeleteObject.class, name = "s3DeleteObject"),
        @JsonSubTypes.Type(value = Change.S3PutUpload.class, name = "s3PutUpload"),
        @JsonSubTypes.Type(value = Change.S3PutPart.class, name = "s3PutPart"),
        @JsonSubTypes.Type(value = Change.S3Complete.class, name = "s3Complete"),
        @JsonSubTypes.Type(value = Change.S3DeleteUpload.class, name = "s3DeleteUpload"),
        @JsonSubTypes.Type(value = Change.S3Pend.class, name = "s3Pend"),
        @JsonSubTypes.Type(value = Change.S3Doom.class, name = "s3Doom"),
        @JsonSubTypes.Type(value = Change.S3Drop.class, name = "s3Drop"),
        @JsonSubTypes.Type(value = Change.S3PutObjectCounted.class, name = "s3PutObjectCounted"),
        @JsonSubTypes.Type(value = Change.S3DeleteObjectCounted.class, name = "s3DeleteObjectCounted"),
        @JsonSubTypes.Type(value = Change.S3PutUploadCounted.class, name = "s3PutUploadCounted"),
        @JsonSubTypes.Type(value = Change.S3CompleteCounted.class, name = "s3CompleteCounted"),
        @JsonSubTypes.Type(value = Change.S3DeleteUploadCounted.class, name = "s3DeleteUploadCounted"),
})
public sealed interface Change {

    /** Writes this change into {@code meta}; returns the value the writer asked for (a new delete-log head), or 0. */
    long apply(MetaStore meta);

    /** A store's record: registered, heartbeat, probe verdict, state change. */
    record PutStore(StoreInfo store) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.putStore(store);
            return 0;
        }
    }

    /** A logical volume's record. */
    record PutVolume(VolumeInfo volume) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.putVolume(volume);
            return 0;
        }
    }

    /** A volume with its stripe map (null: the map is deleted), in one batch. */
    record PutVolumeAndStripes(VolumeInfo volume, StripeMap map) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.putVolumeAndStripes(volume, map);
            return 0;
        }
    }

    /** A volume's stripe map (a rebuilt block, a moved block). */
    record PutStripeMap(StripeMap map) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.putStripeMap(map);
            return 0;
        }
    }

    /** A pending reclaim, recorded before the raid-node writes any of its blocks. */
    record PutReclaim(ReclaimPlan plan) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.putReclaim(plan);
            return 0;
        }
    }

    /** A pending reclaim rolled back. */
    record DeleteReclaim(int volume) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.deleteReclaim(volume);
            return 0;
        }
    }

    /** The reclaim swap: the volume's record and committed map, its pending reclaim gone, in one batch. */
    record SwapStripes(VolumeInfo volume, StripeMap map) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.swapStripes(volume, map);
            return 0;
        }
    }

    /**
     * Entries appended to a volume's delete log, numbered by the leader, with the volume's record when
     * its delete counters change. Entries already in the log (a second apply) are skipped.
     */
    record AppendDeletes(int volumeId, List<DeleteRecord> entries, VolumeInfo volume) implements Change {
        public AppendDeletes {
            entries = List.copyOf(entries);
        }

        @Override
        public long apply(MetaStore meta) {
            long head = meta.nextDeleteSeq(volumeId) - 1;
            List<DeleteRecord> fresh = entries.stream().filter(e -> e.seq() > head).toList();
            if (fresh.isEmpty()) {
                return head;
            }
            return meta.appendDeletes(volumeId, fresh, volume);
        }
    }

    /** Raises the key high-water mark and the volume sequence to at least these values (never lowers them). */
    record RaiseCounters(long keyHighWaterMark, long volumeSequence) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.raiseCounters(keyHighWaterMark, volumeSequence);
            return 0;
        }
    }

    /** Raises the delete floor (never lowers it). */
    record RaiseDeleteFloor(long floor) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.raiseDeleteFloor(floor);
            return 0;
        }
    }

    /** A named record of the default family ({@code raid-lease}, {@code raid-hold}). */
    record PutSetting(String name, byte[] value) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.putSetting(name, value);
            return 0;
        }
    }

    /** Deletes a named record of the default family. */
    record DeleteSetting(String name) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.deleteSetting(name);
            return 0;
        }
    }

    /**
     * Several changes in one log entry, applied in order (a heartbeat: the store's record and its
     * volumes' sizes and states), so they cost one commit. Returns the last change's result.
     */
    record Batch(List<Change> changes) implements Change {
        public Batch {
            changes = List.copyOf(changes);
        }

        @Override
        public long apply(MetaStore meta) {
            long r = 0;
            for (Change c : changes) {
                r = c.apply(meta);
            }
            return r;
        }
    }

    /**
     * The first entry of a new Raft group: every replica takes the leader's cluster id. Applied once:
     * a replica that already took one (its {@code raft-cluster} record is set) keeps it.
     */
    record InitCluster(String clusterId) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.adoptClusterId(clusterId);
            return 0;
        }
    }

    // ---- the S3 namespace (NamespaceStore): every record written whole, as the leader computed it, so a
    // second apply writes the same values; a bucket's counters (objects, bytes, uploads) come with it.

    /** A bucket made, or its counters changed. */
    record S3PutBucket(Bucket bucket) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.namespace().write(b -> b.putBucket(bucket));
            return 0;
        }
    }

    /** An empty bucket removed. */
    record S3DeleteBucket(String name) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.namespace().write(b -> b.deleteBucket(name));
            return 0;
        }
    }

    /**
     * A key's object committed, with its bucket's new counters; the WRITING record {@code pending}
     * (null: none) removed and {@code doomed} (null: none) recorded: the replaced object's chunks.
     */
    record S3PutObject(Bucket bucket, ObjectRecord object, String pending, Pending doomed) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.namespace().write(b -> {
                b.putBucket(bucket);
                b.putObject(object);
                if (pending != null) {
                    b.deletePending(pending);
                }
                if (doomed != null) {
                    b.putPending(doomed);
                }
            });
            return 0;
        }
    }

    /** A key removed, with its bucket's new counters and the DOOMED record of its chunks (null: none). */
    record S3DeleteObject(Bucket bucket, String key, Pending doomed) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.namespace().write(b -> {
                b.putBucket(bucket);
                b.deleteObject(bucket.name(), key);
                if (doomed != null) {
                    b.putPending(doomed);
                }
            });
            return 0;
        }
    }

    /** A multipart upload begun, with its bucket's new counters. */
    record S3PutUpload(Bucket bucket, Upload upload) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.namespace().write(b -> {
                b.putBucket(bucket);
                b.putUpload(upload);
            });
            return 0;
        }
    }

    /** A part recorded; WRITING record {@code pending} removed; {@code doomed}: the chunks of the part it replaces. */
    record S3PutPart(String uploadId, Part part, String pending, Pending doomed) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.namespace().write(b -> {
                b.putPart(uploadId, part);
                if (pending != null) {
                    b.deletePending(pending);
                }
                if (doomed != null) {
                    b.putPending(doomed);
                }
            });
            return 0;
        }
    }

    /**
     * A multipart upload completed: its object committed, the upload and every part of it removed, the
     * bucket's new counters, and {@code doomed}: the parts left out and the replaced object's chunks.
     */
    record S3Complete(Bucket bucket, ObjectRecord object, String uploadId, Pending doomed) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.namespace().write(b -> {
                b.putBucket(bucket);
                b.putObject(object);
                b.deleteUpload(bucket.name(), object.key(), uploadId);
                if (doomed != null) {
                    b.putPending(doomed);
                }
            });
            return 0;
        }
    }

    /** A multipart upload aborted: it and its parts removed, the bucket's counters, {@code doomed}: every part's chunks. */
    record S3DeleteUpload(Bucket bucket, String key, String uploadId, Pending doomed) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.namespace().write(b -> {
                b.putBucket(bucket);
                b.deleteUpload(bucket.name(), key, uploadId);
                if (doomed != null) {
                    b.putPending(doomed);
                }
            });
            return 0;
        }
    }

    /** A WRITING record made or grown (the whole record). */
    record S3Pend(Pending record) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.namespace().write(b -> b.putPending(record));
            return 0;
        }
    }

    /** A record made DOOMED (the whole record). */
    record S3Doom(Pending record) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.namespace().write(b -> b.putPending(record));
            return 0;
        }
    }

    /** A DOOMED record dropped once its needles are deleted. */
    record S3Drop(String id) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.namespace().write(b -> b.deletePending(id));
            return 0;
        }
    }

    // ---- the S3 namespace with counted buckets: a bucket's counters move by the amounts the change carries
    // (read from the bucket as the entries before it left it), so the leader computes a change to one key
    // without reading, or waiting for, the bucket's other keys' changes. A bucket that is gone is not
    // written (never made again by a count).

    /** How a change moves its bucket's counters: objects, bytes and uploads added (negative: taken away). */
    record Counts(long objects, long bytes, long uploads) {
        /** Writes {@code bucket}'s counters moved by these amounts; nothing when the bucket is gone or nothing moves. */
        void to(MetaStore meta, NamespaceStore.Batch b, String bucket) throws org.rocksdb.RocksDBException {
            if (objects == 0 && bytes == 0 && uploads == 0) {
                return;
            }
            Bucket now = meta.namespace().bucket(bucket);
            if (now != null) {
                b.putBucket(new Bucket(now.name(), now.created(), now.region(), now.objects() + objects, now.bytes() + bytes,
                        now.uploads() + uploads));
            }
        }
    }

    /**
     * A key's object committed (with its inline data when it has some) and its bucket's counters moved;
     * the WRITING record {@code pending} (null: none) removed and {@code doomed} (null: none) recorded:
     * the replaced object's chunks.
     */
    record S3PutObjectCounted(String bucket, Counts counts, ObjectRecord object, String pending, Pending doomed) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.namespace().write(b -> {
                counts.to(meta, b, bucket);
                b.putObject(object);
                if (pending != null) {
                    b.deletePending(pending);
                }
                if (doomed != null) {
                    b.putPending(doomed);
                }
            });
            return 0;
        }
    }

    /** A key removed, its bucket's counters moved, and the DOOMED record of its chunks (null: none). */
    record S3DeleteObjectCounted(String bucket, Counts counts, String key, Pending doomed) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.namespace().write(b -> {
                counts.to(meta, b, bucket);
                b.deleteObject(bucket, key);
                if (doomed != null) {
                    b.putPending(doomed);
                }
            });
            return 0;
        }
    }

    /** A multipart upload begun, its bucket's counters moved. */
    record S3PutUploadCounted(String bucket, Counts counts, Upload upload) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.namespace().write(b -> {
                counts.to(meta, b, bucket);
                b.putUpload(upload);
            });
            return 0;
        }
    }

    /**
     * A multipart upload completed: its object committed, the upload and every part of it removed, the
     * bucket's counters moved, and {@code doomed}: the parts left out and the replaced object's chunks.
     */
    record S3CompleteCounted(String bucket, Counts counts, ObjectRecord object, String uploadId, Pending doomed) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.namespace().write(b -> {
                counts.to(meta, b, bucket);
                b.putObject(object);
                b.deleteUpload(bucket, object.key(), uploadId);
                if (doomed != null) {
                    b.putPending(doomed);
                }
            });
            return 0;
        }
    }

    /** A multipart upload aborted: it and its parts removed, the bucket's counters moved, {@code doomed}: every part's chunks. */
    record S3DeleteUploadCounted(String bucket, Counts counts, String key, String uploadId, Pending doomed) implements Change {
        @Override
        public long apply(MetaStore meta) {
            meta.namespace().write(b -> {
                counts.to(meta, b, bucket);
                b.deleteUpload(bucket, key, uploadId);
                if (doomed != null) {
                    b.putPending(doomed);
                }
            });
            return 0;
        }
    }
}
