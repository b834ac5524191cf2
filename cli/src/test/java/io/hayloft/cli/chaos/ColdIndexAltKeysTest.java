package io.hayloft.cli.chaos;

import io.hayloft.client.PhotoNotFoundException;
import io.hayloft.client.PhotoStat;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.format.wire.PhotoId;
import java.util.Arrays;
import org.assertj.core.api.Assertions;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.client.Upload;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ThreadPoolRunner;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The example, found again by the life-cycle checker (seed 1, step 55): 40 photos each with
 * alternate keys 0, 31, 62 and 1000 (160 needles) put as one batch on 4 stores with 2 replicas,
 * sealed and encoded RS(2,1) with 64 KiB blocks, then every needle read back. The cold index used to
 * key its entries by {@code key * 31 + alt}, so (k, 31) and (k + 1, 0) collided and the encode dropped
 * needles.
 */
class ColdIndexAltKeysTest {
    static final int[] ALTS = {0, 31, 62, 1000};

    @TempDir
    Path dir;

    @Test
    void everyNeedleOfPhotosWithAlternateKeysAboveThirtyReadsBackAfterAnEncode() throws Exception {
        ClusterOptions options = ClusterOptions.of(dir).withStores(4, 4).withReplication(2).withTiming(200, 200, 2);
        try (EmbeddedCluster cluster = EmbeddedCluster.start(options); HayloftClient client = cluster.newClient();
             ThreadPoolRunner runner = new ThreadPoolRunner(2)) {
            Random random = new Random(160);
            List<Upload> uploads = new ArrayList<>();
            List<byte[]> data = new ArrayList<>();
            for (int p = 0; p < 40; p++) {
                Upload u = Upload.empty();
                for (int alt : ALTS) {
                    byte[] b = new byte[100 + random.nextInt(3000)];
                    random.nextBytes(b);
                    u.alt(alt, b);
                    data.add(b);
                }
                uploads.add(u);
            }
            List<PutResult> put = Futures.await(client.putAllUploadsAsync(uploads));
            assertThat(put).hasSize(160);
            int volume = put.get(0).id().volume();
            assertThat(put).allMatch(r -> r.id().volume() == volume);

            Futures.await(client.directory().markReadOnly(volume, "test"));
            RaidConfig config = new RaidConfig();
            config.directory = cluster.directoryAddress();
            config.codec = "rs";
            config.k = 2;
            config.r = 1;
            config.blockSize = 65536;
            config.indexReplicas = 2;
            config.spoolDir = dir.toString();
            new RaidNode(config, runner).encode(volume);
            assertThat(Futures.await(client.directory().volume(volume)).state()).isEqualTo(VolumeState.ERASURE_CODED);

            List<String> wrong = new ArrayList<>();
            for (int i = 0; i < put.size(); i++) {
                try {
                    if (!Arrays.equals(client.get(put.get(i).id()), data.get(i))) {
                        wrong.add(put.get(i).id() + " (other bytes)");
                    }
                } catch (RuntimeException e) {
                    wrong.add(put.get(i).id() + " (" + Futures.unwrap(e).getClass().getSimpleName() + ")");
                }
            }
            assertThat(wrong).as("needles not read back after the encode").isEmpty();

            // stat of a coded photo lists its alternates from the needle index, whichever alternate the id names.
            for (int i = 0; i < 8; i++) {
                PhotoStat st = client.stat(put.get(i).id());
                int photo = i / ALTS.length;
                List<String> expected = new ArrayList<>();
                for (int a = 0; a < ALTS.length; a++) {
                    expected.add(ALTS[a] + ":" + data.get(photo * ALTS.length + a).length);
                }
                assertThat(st.alts()).extracting(Object::toString).as("alts of %s", put.get(i).id()).isEqualTo(expected);
                assertThat(st.volumeState()).isEqualTo(VolumeState.ERASURE_CODED);
            }
            // A delete logs the photo with its exact needle count: reclaim's dead-needle count.
            client.delete(put.get(ALTS.length * 2 + 1).id());
            VolumeInfo v = Futures.await(client.directory().volume(volume));
            assertThat(v.deletedPhotos()).isEqualTo(1);
            assertThat(v.deletedNeedles()).isEqualTo(ALTS.length);
            for (int a = 0; a < ALTS.length; a++) {
                PhotoId gone = put.get(ALTS.length * 2 + a).id();
                Assertions.assertThatThrownBy(() -> client.get(gone))
                        .isInstanceOf(PhotoNotFoundException.class);
            }
        }
    }
}
