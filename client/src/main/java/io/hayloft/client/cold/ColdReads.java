package io.hayloft.client.cold;

import io.hayloft.client.HayloftException;
import io.hayloft.client.PhotoNotFoundException;
import io.hayloft.client.PhotoStat;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.cold.ClusterReads;
import io.hayloft.cold.ColdReader;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.format.wire.VolumeIndex;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The client's read path for photos on erasure-coded volumes: delegates to hayloft-cold-read's
 * {@link ColdReader} (one range read from the needle's block; a degraded read from {@code k} other
 * blocks when that fails; docs/raid.md), run on the client's executor because it blocks. The photo
 * id names the volume; the needle's header decides the cookie and the volume's delete log in the
 * directory (one small call per read) decides whether it was deleted.
 *
 * <p>Thread-safe.
 */
public final class ColdReads implements AutoCloseable {

    private final ColdReader reader;
    private final Executor executor;

    /** @param http the client's transport (its scheme, TLS, retries) */
    public ColdReads(String directory, String adminToken, Duration timeout, Executor executor,
                     HttpTransport http) {
        this(List.of(directory), adminToken, timeout, executor, http);
    }

    /**
     * @param directories the directory's addresses: a cold read's directory calls go on to the next when one is unreachable
     * @param http the client's transport (its scheme, TLS, retries)
     */
    public ColdReads(List<String> directories, String adminToken, Duration timeout, Executor executor,
                     HttpTransport http) {
        this.reader = new ColdReader(new ClusterReads(directories, adminToken, timeout, http.clusterRpc()));
        this.executor = executor;
    }

    /**
     * Reads the needle of {@code id} from its volume's stripes; fails with {@link PhotoNotFoundException}
     * when it is deleted (index flag or delete log), missing, the volume unknown or the cookie wrong.
     */
    public CompletableFuture<byte[]> read(PhotoId id) {
        return CompletableFuture.supplyAsync(() -> {
            byte[] b;
            try {
                b = reader.get(id.volume(), id.key(), id.alt(), id.cookie());
            } catch (ColdReader.StripeLostException e) {
                throw new HayloftException(e.getMessage(), e);
            } catch (IOException e) {
                throw new HayloftException("cold read of " + id + " failed: " + e.getMessage(), e);
            }
            if (b == null) {
                throw new PhotoNotFoundException(id, "deleted, or not in its erasure-coded volume");
            }
            return b;
        }, executor);
    }

    /**
     * The live alternate keys of photo {@code id} in its erasure-coded volume with their sizes, from the
     * volume's needle index once needle {@code id} was read and its cookie matched; fails with
     * {@link PhotoNotFoundException} as {@link #read} does.
     */
    public CompletableFuture<List<PhotoStat.Alt>> alts(PhotoId id) {
        return CompletableFuture.supplyAsync(() -> {
            List<VolumeIndex.Entry> live;
            try {
                live = reader.alts(id.volume(), id.key(), id.alt(), id.cookie());
            } catch (ColdReader.StripeLostException e) {
                throw new HayloftException(e.getMessage(), e);
            } catch (IOException e) {
                throw new HayloftException("cold read of " + id + " failed: " + e.getMessage(), e);
            }
            if (live == null) {
                throw new PhotoNotFoundException(id, "deleted, or not in its erasure-coded volume");
            }
            List<PhotoStat.Alt> out = new ArrayList<>(live.size());
            for (VolumeIndex.Entry e : live) {
                out.add(new PhotoStat.Alt(e.alt(), e.dataSize()));
            }
            return out;
        }, executor);
    }

    public long degradedReads() {
        return reader.degradedReads();
    }

    @Override
    public void close() {
        reader.close();
    }
}
