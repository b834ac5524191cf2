package io.hayloft.s3.data;

import io.hayloft.client.HayloftClient;
import io.hayloft.client.NamespaceClient;
import io.hayloft.format.s3.Chunk;
import java.io.InputStream;
import java.util.List;

/**
 * Objects' bytes as needles (docs/s3.md "How objects are stored"): writes a body as chunks of at most
 * {@code chunkBytes}, each named in a WRITING pending record before its needle is written; reads a
 * range of an object back from the chunks that cover it; frees the needles of DOOMED records; and the
 * orphan sweep. Thread-safe.
 */
public final class ChunkStore implements AutoCloseable {

    public ChunkStore(HayloftClient client, NamespaceClient namespace, int chunkBytes) {
        throw new UnsupportedOperationException("todo: helper data");
    }

    /** Starts writing one body (a PUT's object or an UploadPart's part). */
    public Writer writer() {
        throw new UnsupportedOperationException("todo");
    }

    /**
     * The bytes {@code [offset, offset + length)} of the data made of {@code chunks}, read from the
     * chunks that cover them (the next chunk fetched while the current one is read). The stream's
     * read throws an IOException if a chunk cannot be read.
     */
    public InputStream read(List<Chunk> chunks, long offset, long length) {
        throw new UnsupportedOperationException("todo");
    }

    /**
     * Deletes the needles named in DOOMED record {@code doomed} (null: nothing), then the record; in the
     * background, failures left to the sweep.
     */
    public void free(String doomed) {
        throw new UnsupportedOperationException("todo");
    }

    /**
     * The orphan sweep, once: dooms WRITING records older than {@code orphanAfterMillis}, aborts
     * multipart uploads older than {@code abandonedUploadMillis}, and frees every DOOMED record.
     * Returns the needles deleted.
     */
    public long sweep(long orphanAfterMillis, long abandonedUploadMillis) {
        throw new UnsupportedOperationException("todo");
    }

    @Override
    public void close() {
    }

    /**
     * One body being written: bytes are buffered up to a chunk, then the chunk is named in the pending
     * record and written as a needle (on the calling thread). Not thread-safe: one writer per body.
     */
    public interface Writer {
        void write(byte[] b, int off, int len);

        /** Writes the last (partial) chunk; returns every chunk in order. */
        List<Chunk> finish();

        /** The WRITING pending record naming this body's chunks (null while no chunk was written). */
        String pending();

        /** Bytes written so far. */
        long size();

        /** The body will not be committed: its pending record is doomed and its needles freed. Never throws. */
        void abort();
    }
}
