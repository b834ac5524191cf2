package io.hayloft.directory.meta;

import io.hayloft.format.directory.VolumeState;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.ReclaimPlan;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.wire.StripeMap;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code reclaims} family, the swap batch and the photo-with-counters batch survive a reopen. */
class ReclaimMetaTest {

    @TempDir
    Path dir;

    private static StripeMap map(String job, String status) {
        return new StripeMap(7, job, "rs", 1, 1, 8, 8, status, List.of(new StripeMap.Stripe(0, List.of(
                new StripeMap.Block("a", "v7-" + job + "-s0-u0", 0, 0), new StripeMap.Block("b", "v7-" + job + "-s0-u1", 0, 0)))),
                new StripeMap.IndexBlock("v7-" + job + "-index", List.of("a"), 0, 0));
    }

    @Test
    void aPendingReclaimAndTheSwapAreDurable() {
        Path db = dir.resolve("db");
        VolumeInfo v = new VolumeInfo(7, VolumeState.ERASURE_CODED, List.of(), 10, 100, 1, "encoded");
        ReclaimPlan p = new ReclaimPlan("aaaaaaaa", 1, 2, map("bbbbbbbb", StripeMap.PLANNED));
        try (MetaStore m = MetaStore.open(db, true)) {
            m.putVolumeAndStripes(v, map("aaaaaaaa", StripeMap.COMMITTED));
            m.putReclaim(p);
            m.appendDeletes(7, List.of(new MetaStore.DeleteRecord(1, 5, 9, 2)), v.withDeletes(1, 2));
        }
        try (MetaStore m = MetaStore.open(db, false)) {
            assertThat(m.reclaim(7)).isEqualTo(p);
            assertThat(m.reclaims()).containsExactly(p);
            assertThat(m.deleteSeq(7, 5, 9)).isEqualTo(1);
            assertThat(m.volume(7).deletedNeedles()).isEqualTo(2);
            assertThat(m.stripeMap(7).job()).isEqualTo("aaaaaaaa");
            m.swapStripes(v.withDeletes(0, 0), map("bbbbbbbb", StripeMap.COMMITTED));
        }
        try (MetaStore m = MetaStore.open(db, false)) {
            assertThat(m.reclaim(7)).isNull();
            assertThat(m.stripeMap(7)).isEqualTo(map("bbbbbbbb", StripeMap.COMMITTED));
            assertThat(m.volume(7).deletedPhotos()).isZero();
            m.putReclaim(p);
            m.deleteReclaim(7);
            assertThat(m.reclaims()).isEmpty();
        }
    }
}
