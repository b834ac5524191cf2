package io.hayloft.store.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.store.StoreServer;
import io.hayloft.store.block.BlockStore;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /blocks/<name>?op=pull}: one store copies a block from another with one streamed read,
 * far larger than the request body limit; it replaces a copy left by an earlier attempt; bad
 * arguments are 400 naming the parameter, an unknown source block 404, a source store that is gone
 * 502, and a failed pull leaves no block and no temporary file behind.
 */
class BlockPullTest {
    @TempDir
    Path dir;

    StoreServer source;
    StoreServer target;
    TestHttp http;

    @BeforeEach
    void start() throws Exception {
        source = StoreServer.start(StoreServerTest.config(dir.resolve("source")));
        target = StoreServer.start(StoreServerTest.config(dir.resolve("target")));
        http = new TestHttp(target.port());
    }

    @AfterEach
    void stop() throws Exception {
        target.close();
        source.close();
    }

    private String from() {
        return "127.0.0.1:" + source.port();
    }

    @Test
    void aBlockLargerThanTheBodyLimitIsPulledWholeAndReplacesAnEarlierCopy() throws Exception {
        long size = (24L << 20) + 8; // 24 MiB: 24 times the store's 1 MiB body limit, not a multiple of a chunk
        Path file = dir.resolve("source").resolve("blocks").resolve(BlockStore.fileName("v1-0000000a-s0-u0"));
        Files.createDirectories(file.getParent());
        CRC32C expected = new CRC32C();
        Random rnd = new Random(3);
        byte[] chunk = new byte[1 << 20];
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (long w = 0; w < size; w += chunk.length) {
                int n = (int) Math.min(chunk.length, size - w);
                rnd.nextBytes(chunk);
                expected.update(chunk, 0, n);
                ch.write(ByteBuffer.wrap(chunk, 0, n));
            }
        }
        // a partial copy an interrupted drain left
        assertThat(http.post("/blocks/v1-0000000a-s0-u0-g1?op=create", null).status()).isEqualTo(201);
        assertThat(http.post("/blocks/v1-0000000a-s0-u0-g1?op=append", new byte[] {1, 2, 3}).status()).isEqualTo(200);

        TestHttp.Reply r = http.post("/blocks/v1-0000000a-s0-u0-g1?op=pull&from=" + from()
                + "&source=v1-0000000a-s0-u0&length=" + size, null);

        assertThat(r.status()).as(new String(r.body())).isEqualTo(201);
        assertThat(r.json().get("length").asLong()).isEqualTo(size);
        assertThat(r.json().get("crc32c").asLong()).isEqualTo(expected.getValue());
        var listed = target.store().blocks().list().stream().filter(b -> b.name().equals("v1-0000000a-s0-u0-g1")).findFirst()
                .orElseThrow();
        assertThat(listed.length()).isEqualTo(size);
        assertThat(listed.crc32c()).isEqualTo(expected.getValue());
        assertThat(Files.list(dir.resolve("target").resolve("blocks")).map(p -> p.getFileName().toString()))
                .noneMatch(n -> n.endsWith(".tmp"));

        // An empty block pulls too.
        source.store().blocks().put("empty", ByteBuffer.allocate(0));
        r = http.post("/blocks/empty2?op=pull&from=" + from() + "&source=empty&length=0", null);
        assertThat(r.status()).isEqualTo(201);
        assertThat(r.json().get("length").asLong()).isZero();
    }

    @Test
    void badArgumentsAMissingSourceAndADeadSourceAreClearErrorsAndLeaveNothing() throws Exception {
        source.store().blocks().put("small", ByteBuffer.wrap(new byte[] {1, 2, 3, 4}));
        TestHttp.Reply r = http.post("/blocks/b?op=pull&source=small&length=4", null);
        assertThat(r.status()).isEqualTo(400);
        assertThat(new String(r.body())).contains("from");
        r = http.post("/blocks/b?op=pull&from=not%20a%20host&source=small&length=4", null);
        assertThat(r.status()).isEqualTo(400);
        r = http.post("/blocks/b?op=pull&from=" + from() + "&source=..bad&length=4", null);
        assertThat(r.status()).isEqualTo(400);
        assertThat(new String(r.body())).contains("bad block name");
        r = http.post("/blocks/b?op=pull&from=" + from() + "&source=small&length=-1", null);
        assertThat(r.status()).isEqualTo(400);
        assertThat(new String(r.body())).contains("length");

        r = http.post("/blocks/b?op=pull&from=" + from() + "&source=nosuch&length=4", null);
        assertThat(r.status()).isEqualTo(404);
        assertThat(r.json().path("error").path("name").asText()).isEqualTo("BLOCK_NOT_FOUND");

        // longer than the source block: the source refuses the range (416), not a 500
        r = http.post("/blocks/b?op=pull&from=" + from() + "&source=small&length=5", null);
        assertThat(r.status()).isEqualTo(502);
        assertThat(r.json().path("error").path("name").asText()).isEqualTo("PULL_SOURCE_FAILED");

        int port = source.port();
        source.close();
        r = http.post("/blocks/b?op=pull&from=127.0.0.1:" + port + "&source=small&length=4", null);
        assertThat(r.status()).isEqualTo(502);
        assertThat(new String(r.body())).contains("small");
        source = StoreServer.start(StoreServerTest.config(dir.resolve("source2")));

        assertThat(target.store().blocks().list()).isEmpty();
        assertThat(Files.list(dir.resolve("target").resolve("blocks"))).isEmpty();
    }
}
