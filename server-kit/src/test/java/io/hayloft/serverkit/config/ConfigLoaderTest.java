package io.hayloft.serverkit.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {
    public static final class Cfg {
        public List<String> dirs = List.of("data");
        public int port = 1;
        public Nested nested = new Nested();
    }

    public static final class Listed {
        @CommaList
        public String directory = "d:1";
        public String host = "h";
    }

    public static final class Nested {
        public long limit = 5;
    }

    @TempDir
    Path dir;

    @Test
    void yamlThenOverridesThenDefaults() throws Exception {
        Path f = dir.resolve("c.yaml");
        Files.writeString(f, "port: 80\nnested:\n  limit: 7\n");
        Cfg c = ConfigLoader.load(f, List.of("port=81", "dirs=/a,/b"), Cfg.class);
        assertThat(c.port).isEqualTo(81);
        assertThat(c.nested.limit).isEqualTo(7);
        assertThat(c.dirs).containsExactly("/a", "/b");
        assertThat(ConfigLoader.load(null, List.of("dirs=/x", "nested.limit=9"), Cfg.class).dirs).containsExactly("/x");
    }

    @Test
    void errorsNameTheKeyOrValue() throws Exception {
        assertThatThrownBy(() -> ConfigLoader.load(null, List.of("prot=1"), Cfg.class)).hasMessageContaining("'prot'");
        assertThatThrownBy(() -> ConfigLoader.load(null, List.of("port=abc"), Cfg.class)).hasMessageContaining("abc");
        assertThatThrownBy(() -> ConfigLoader.load(null, List.of("port"), Cfg.class)).hasMessageContaining("key=value");
        assertThatThrownBy(() -> ConfigLoader.load(dir.resolve("missing.yaml"), List.of(), Cfg.class))
                .hasMessageContaining("not found");
    }

    @Test
    void aCommaListFieldTakesAStringAYamlListOrAnOverrideWithCommas() throws Exception {
        Path f = dir.resolve("l.yaml");
        Files.writeString(f, "directory: a:1,b:2 , c:3\n");
        assertThat(ConfigLoader.load(f, List.of(), Listed.class).directory).isEqualTo("a:1,b:2 , c:3");
        Files.writeString(f, "directory:\n  - a:1\n  - b:2\n  - c:3\n");
        assertThat(ConfigLoader.load(f, List.of(), Listed.class).directory).isEqualTo("a:1,b:2,c:3");
        Files.writeString(f, "directory: [a:1, b:2]\n");
        assertThat(ConfigLoader.load(f, List.of(), Listed.class).directory).isEqualTo("a:1,b:2");
        assertThat(ConfigLoader.load(null, List.of("directory=x:1,y:2,z:3"), Listed.class).directory).isEqualTo("x:1,y:2,z:3");
        assertThat(ConfigLoader.load(null, List.of("directory=x:1"), Listed.class).directory).isEqualTo("x:1");
        assertThat(ConfigLoader.load(null, List.of(), Listed.class).directory).isEqualTo("d:1");
        // only marked fields are joined: a list for another String field stays an error naming it
        assertThatThrownBy(() -> ConfigLoader.load(null, List.of("host=a,b"), Listed.class)).hasMessageContaining("bad config value");
        Files.writeString(f, "directory:\n  - {host: a, port: 1}\n");
        assertThatThrownBy(() -> ConfigLoader.load(f, List.of(), Listed.class)).hasMessageContaining("directory")
                .hasMessageContaining("host:port");
    }
}
