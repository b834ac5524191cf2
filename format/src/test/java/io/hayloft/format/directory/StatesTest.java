package io.hayloft.format.directory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.EnumSet;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * Every predicate of {@link VolumeState} and {@link StoreState}, for every constant: the set of
 * states it holds for is spelled out once here, so a new constant or a changed predicate fails.
 * And the states' JSON is their names, both ways.
 */
class StatesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static <E extends Enum<E>> void holdsExactly(Class<E> type, Predicate<E> p, Set<E> expected) {
        for (E e : type.getEnumConstants()) {
            assertThat(p.test(e)).as("%s", e).isEqualTo(expected.contains(e));
        }
    }

    @Test
    void volumeStatePredicates() {
        assertThat(VolumeState.values()).containsExactly(VolumeState.WRITABLE, VolumeState.READ_ONLY, VolumeState.ENCODING,
                VolumeState.ERASURE_CODED, VolumeState.DEGRADED, VolumeState.REPAIRING);
        holdsExactly(VolumeState.class, VolumeState::writable, EnumSet.of(VolumeState.WRITABLE));
        holdsExactly(VolumeState.class, VolumeState::readOnly, EnumSet.of(VolumeState.READ_ONLY));
        holdsExactly(VolumeState.class, VolumeState::hot, EnumSet.of(VolumeState.WRITABLE, VolumeState.READ_ONLY));
        holdsExactly(VolumeState.class, VolumeState::cold, EnumSet.of(VolumeState.ENCODING, VolumeState.ERASURE_CODED,
                VolumeState.DEGRADED, VolumeState.REPAIRING));
        holdsExactly(VolumeState.class, VolumeState::coded, EnumSet.of(VolumeState.ERASURE_CODED, VolumeState.DEGRADED,
                VolumeState.REPAIRING));
        for (VolumeState s : VolumeState.values()) {
            assertThat(s.hot()).as("%s: hot is not cold", s).isNotEqualTo(s.cold());
            assertThat(!s.coded() || s.cold()).as("%s: coded implies cold", s).isTrue();
        }
    }

    @Test
    void storeStatePredicates() {
        assertThat(StoreState.values()).containsExactly(StoreState.UP, StoreState.FAILED, StoreState.DRAINING, StoreState.DRAINED);
        holdsExactly(StoreState.class, StoreState::up, EnumSet.of(StoreState.UP));
        holdsExactly(StoreState.class, StoreState::serving, EnumSet.of(StoreState.UP, StoreState.DRAINING));
        holdsExactly(StoreState.class, StoreState::draining, EnumSet.of(StoreState.DRAINING));
    }

    @Test
    void statesAreTheirNamesInJson() throws Exception {
        for (VolumeState s : VolumeState.values()) {
            assertThat(JSON.writeValueAsString(s)).isEqualTo("\"" + s.name() + "\"");
            assertThat(JSON.readValue("\"" + s.name() + "\"", VolumeState.class)).isEqualTo(s);
        }
        for (StoreState s : StoreState.values()) {
            assertThat(JSON.writeValueAsString(s)).isEqualTo("\"" + s.name() + "\"");
            assertThat(JSON.readValue("\"" + s.name() + "\"", StoreState.class)).isEqualTo(s);
        }
    }
}
