package io.hayloft.store.http;

import java.util.Random;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A needle GET carries the data's CRC32C and the volume's state, for caches (docs/cache-api.md). */
class NeedleHeadersTest {
    @TempDir
    Path dir;

    @Test
    void getSendsTheDataCrcAndTheVolumeState() throws Exception {
        StoreConfig c = new StoreConfig();
        c.dataDirs = List.of(dir.toString());
        c.host = "127.0.0.1";
        c.port = 0;
        c.fsync = "never";
        try (StoreServer s = StoreServer.start(c.validate())) {
            s.store().create(1);
            byte[] data = new byte[5000];
            new Random(3).nextBytes(data);
            s.volume(1).write(9, 2, 0xabcL, ByteBuffer.wrap(data));
            CRC32C crc = new CRC32C();
            crc.update(data);
            HttpClient http = HttpClient.newHttpClient();
            URI u = URI.create("http://127.0.0.1:" + s.port() + "/1/9/2?cookie=abc");
            HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(u).build(), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(r.body()).isEqualTo(data);
            assertThat(r.headers().firstValue(StoreHttpHandler.CRC_HEADER)).hasValue(String.format("%08x", crc.getValue()));
            assertThat(r.headers().firstValue(StoreHttpHandler.VOLUME_STATE_HEADER)).hasValue("writable");
            s.volume(1).seal();
            r = http.send(HttpRequest.newBuilder(u).build(), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(r.headers().firstValue(StoreHttpHandler.VOLUME_STATE_HEADER)).hasValue("read-only");
            assertThat(r.headers().firstValue(StoreHttpHandler.CRC_HEADER)).hasValue(String.format("%08x", crc.getValue()));
        }
    }
}
