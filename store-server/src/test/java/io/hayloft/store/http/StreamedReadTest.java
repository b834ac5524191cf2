package io.hayloft.store.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.store.StoreServer;
import io.hayloft.store.block.BlockStore;
import io.hayloft.store.volume.Compactor;
import io.hayloft.store.volume.Volume;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Block and raw volume reads over {@link StoreHttpHandler#STREAM_THRESHOLD} are streamed: a
 * 200 MiB block reads back whole (CRC32C and length), consumed as a stream by the client; ranges
 * and small reads still answer exactly; a raw range keeps reading the file it opened after a
 * compaction replaced it.
 */
class StreamedReadTest {
    @TempDir
    Path dir;

    StoreServer server;
    TestHttp http;
    final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeEach
    void start() throws Exception {
        server = StoreServer.start(StoreServerTest.config(dir));
        http = new TestHttp(server.port());
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    /** Streams the body of a GET through a CRC32C; returns {status, length, crc}. */
    private long[] stream(String path) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofMinutes(2)).GET().build();
        HttpResponse<InputStream> r = client.send(req, HttpResponse.BodyHandlers.ofInputStream());
        CRC32C crc = new CRC32C();
        long n = 0;
        try (InputStream in = r.body()) {
            byte[] buf = new byte[64 * 1024];
            for (int k; (k = in.read(buf)) > 0; n += k) {
                crc.update(buf, 0, k);
            }
        }
        assertThat(r.headers().firstValueAsLong("content-length")).hasValue(n);
        return new long[] {r.statusCode(), n, crc.getValue()};
    }

    @Test
    void aTwoHundredMebibyteBlockStreamsBackWhole() throws Exception {
        long size = 200L << 20;
        Path file = dir.resolve("blocks").resolve(BlockStore.fileName("big.0"));
        Files.createDirectories(file.getParent());
        CRC32C expected = new CRC32C();
        byte[] chunk = new byte[1 << 20];
        Random rnd = new Random(9);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (long w = 0; w < size; w += chunk.length) {
                rnd.nextBytes(chunk);
                expected.update(chunk);
                ch.write(ByteBuffer.wrap(chunk));
            }
        }
        long[] whole = stream("/blocks/big.0");
        assertThat(whole).containsExactly(200, size, expected.getValue());

        // a streamed range and a small (in-memory) range agree with the file
        long[] range = stream("/blocks/big.0?offset=12345&length=" + (3 << 20));
        assertThat(range[0]).isEqualTo(200);
        assertThat(range[1]).isEqualTo(3 << 20);
        assertThat(range[2]).isEqualTo(crcOf(file, 12345, 3 << 20));
        TestHttp.Reply small = http.get("/blocks/big.0?offset=" + (size - 10) + "&length=10");
        assertThat(small.status()).isEqualTo(200);
        assertThat(small.body()).hasSize(10);
        // the connection is reusable after a streamed body, and a range past the end is a 4xx JSON error
        TestHttp.Reply outside = http.get("/blocks/big.0?offset=1&length=" + size);
        assertThat(outside.status()).isBetween(400, 499);
        assertThat(outside.errorCode()).isPositive();
        assertThat(http.get("/blocks/none.0").status()).isEqualTo(404);
    }

    private static long crcOf(Path file, long offset, int length) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(length);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ch.read(b, offset);
        }
        CRC32C crc = new CRC32C();
        crc.update(b.flip());
        return crc.getValue();
    }

    @Test
    void rawVolumeReadsStreamAndARangeOutlivesACompaction() throws Exception {
        Volume v = server.store().create(5);
        byte[] photo = new byte[600_000];
        new Random(1).nextBytes(photo);
        for (int i = 0; i < 6; i++) {
            v.write(i, 0, 99, ByteBuffer.wrap(photo));
        }
        for (int i = 0; i < 5; i++) {
            v.delete(i, 0, 99);
        }
        long end = v.status().sizeBytes();
        ByteBuffer whole = v.readRaw(0, (int) end);
        CRC32C crc = new CRC32C();
        crc.update(whole.duplicate());
        assertThat(stream("/volumes/5/raw?offset=0&length=" + end)).containsExactly(200, end, crc.getValue());
        assertThat(http.get("/volumes/5/raw?offset=1&length=" + end).status()).isBetween(400, 499);

        // a range opened before a compaction keeps reading the file it opened
        Volume.RawRange range = v.openRaw(0, end);
        Compactor.compact(v);
        assertThat(v.status().sizeBytes()).isLessThan(end);
        ByteBuffer old = ByteBuffer.allocate((int) end);
        while (old.hasRemaining()) {
            assertThat(range.channel().read(old, old.position())).isPositive();
        }
        assertThat(old.flip()).isEqualTo(whole);
        range.close();
        range.close(); // idempotent
        assertThat(range.channel().isOpen()).isFalse();
        assertThat(v.read(5, 0, 99)).isEqualTo(ByteBuffer.wrap(photo));
    }
}
