package io.hayloft.format.directory;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * What a directory backup holds: the answer of {@code POST /v1/backup} ({@code hayloft directory
 * backup}, docs/directory-api.md), and the backup's own manifest file {@code hayloft-backup.json},
 * written last into the backup's directory (docs/operations.md). Unknown fields are ignored on read.
 * Immutable; thread-safe.
 *
 * @param format           the manifest's version ({@code 1})
 * @param dir              the backup's directory on the directory's host
 * @param clusterId        the cluster the database belongs to
 * @param databaseFormat   the directory database format
 * @param keyHighWaterMark the key allocator's persisted mark in the backup: every key it handed out is below it
 * @param volumeSequence   the next volume id in the backup
 * @param stores           store records in the backup
 * @param volumes          volume records in the backup
 * @param deleteLogEntries delete-log entries in the backup, over all volumes
 * @param files            files of the checkpoint
 * @param bytes            their total size
 * @param createdMillis    wall-clock time the checkpoint was taken
 * @param millis           how long the backup took
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record BackupManifest(int format, String dir, String clusterId, int databaseFormat, long keyHighWaterMark,
                             long volumeSequence, long stores, long volumes, long deleteLogEntries, long files, long bytes,
                             long createdMillis, long millis) {
}
