package io.hayloft.store.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.wire.VolumeIndex;
import io.hayloft.store.StoreServer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /admin/volumes/<id>/pull?from=}: a store copies a sealed replica from another, opens it
 * with every needle (deleted flags included) at the same offsets, and keeps it across a restart; the
 * refusals (writable source, volume already here, missing source, bad address); a stale pull file
 * is deleted at start.
 */
class VolumePullTest {
    @TempDir
    Path dir;

    @Test
    void aStorePullsASealedReplicaAndRefusesWhatItMustNot() throws Exception {
        Path a = Files.createDirectories(dir.resolve("a"));
        Path b = Files.createDirectories(dir.resolve("b"));
        try (StoreServer source = StoreServer.start(StoreServerTest.config(a))) {
            TestHttp src = new TestHttp(source.port());
            assertThat(src.post("/admin/volumes/5", null).status()).isEqualTo(201);
            int[] alts = {0, 3, 7, 0x7fffffff, 0xffffffff};
            for (int i = 0; i < 40; i++) {
                int alt = alts[i % alts.length];
                int size = i == 0 ? 0 : i == 1 ? 300_000 : 1 + i * 97;
                assertThat(src.put("/5/" + (1000 + i) + "/" + Integer.toUnsignedString(alt) + "?cookie=ab",
                        StoreServerTest.data(size, i)).status()).isEqualTo(201);
            }
            assertThat(src.delete("/5/1002/" + Integer.toUnsignedString(alts[2]) + "?cookie=ab").status()).isEqualTo(204);
            String from = "from=127.0.0.1:" + source.port();
            try (StoreServer target = StoreServer.start(StoreServerTest.config(b))) {
                TestHttp dst = new TestHttp(target.port());
                TestHttp.Reply writable = dst.post("/admin/volumes/5/pull?" + from, null);
                assertThat(writable.status()).as(new String(writable.body())).isEqualTo(409);
                assertThat(writable.errorCode()).isEqualTo(102);
                assertThat(src.post("/admin/volumes/5/seal", null).status()).isEqualTo(200);
                assertThat(dst.post("/admin/volumes/6/pull?" + from, null).errorCode()).isEqualTo(101);
                assertThat(dst.post("/admin/volumes/5/pull?from=nowhere", null).status()).isEqualTo(400);
                assertThat(dst.post("/admin/volumes/5/pull", null).status()).isEqualTo(400);
                TestHttp.Reply pulled = dst.post("/admin/volumes/5/pull?" + from, null);
                assertThat(pulled.status()).as(new String(pulled.body())).isEqualTo(201);
                assertThat(pulled.json().path("readOnly").asBoolean()).isTrue();
                assertThat(pulled.json().path("needles").asInt()).isEqualTo(39);
                VolumeIndex want = VolumeIndex.decode(src.get("/admin/volumes/5/index").body(), "source", 0);
                VolumeIndex got = VolumeIndex.decode(dst.get("/admin/volumes/5/index").body(), "target", 0);
                assertThat(VolumeIndex.difference(want, got, true, true)).isNull();
                assertThat(got.size()).isEqualTo(want.size());
                assertThat(dst.get("/5/1001/" + Integer.toUnsignedString(alts[1]) + "?cookie=ab").body())
                        .isEqualTo(StoreServerTest.data(300_000, 1));
                assertThat(dst.get("/5/1002/" + Integer.toUnsignedString(alts[2]) + "?cookie=ab").status()).isEqualTo(404);
                assertThat(dst.post("/admin/volumes/5/pull?" + from, null).errorCode()).isEqualTo(103);
            }
            Files.write(b.resolve("9.dat.pull"), new byte[100]); // an interrupted pull
            try (StoreServer target = StoreServer.start(StoreServerTest.config(b))) {
                TestHttp dst = new TestHttp(target.port());
                assertThat(dst.get("/5/1000/0?cookie=ab").status()).isEqualTo(200);
                assertThat(dst.get("/5/1039/" + Integer.toUnsignedString(alts[4]) + "?cookie=ab").body())
                        .isEqualTo(StoreServerTest.data(1 + 39 * 97, 39));
                assertThat(Files.exists(b.resolve("9.dat.pull"))).isFalse();
            }
        }
    }
}
