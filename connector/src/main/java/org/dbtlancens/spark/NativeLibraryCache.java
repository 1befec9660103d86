package org.dbtlancens.spark;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.CodeSource;
import java.util.Locale;

/**
 * Loads a JNI library packed in a jar from a cache directory, extracting it there only once.
 *
 * <p>The cache key is the jar's path, size and modification time, so a new lance-core jar gets a
 * new copy. The copy is written under a temporary name and renamed into place, so JVMs starting
 * together never load a half-written file. The directory is the system property
 * {@code lancens.native.dir}, else {@code $XDG_CACHE_HOME/dbt-lancens/native}, else
 * {@code ~/.cache/dbt-lancens/native}.
 */
public final class NativeLibraryCache {
  private NativeLibraryCache() {}

  public static synchronized void load(Class<?> owner, String prefix, String name) {
    String resource = resourceName(prefix, name);
    try {
      System.load(cached(owner, resource).toString());
    } catch (IOException e) {
      throw new IllegalStateException("cannot extract " + resource + " into the native cache", e);
    }
  }

  private static String resourceName(String prefix, String name) {
    String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
    String platform;
    String file;
    if (os.contains("mac")) {
      platform = "darwin-" + (arch.equals("aarch64") ? "aarch64" : "x86-64");
      file = "lib" + name + ".dylib";
    } else if (os.contains("win")) {
      platform = "win32-" + (arch.contains("64") ? "x86-64" : "x86");
      file = name + ".dll";
    } else {
      platform = "linux-" + (arch.equals("aarch64") ? "aarch64" : "x86-64");
      file = "lib" + name + ".so";
    }
    String base = prefix.endsWith("/") ? prefix : prefix + "/";
    return base + platform + "/" + file;
  }

  private static Path cached(Class<?> owner, String resource) throws IOException {
    URL url = owner.getResource(resource);
    if (url == null) {
      throw new IOException(resource + " is not in " + owner.getName() + "'s jar");
    }
    Path target = cacheDirectory().resolve(key(owner)).resolve(Paths.get(resource).getFileName().toString());
    if (Files.isRegularFile(target)) {
      return target;
    }
    Files.createDirectories(target.getParent());
    Path partial = Files.createTempFile(target.getParent(), ".partial-", ".tmp");
    try (InputStream in = url.openStream()) {
      Files.copy(in, partial, StandardCopyOption.REPLACE_EXISTING);
      Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(partial);
    }
    return target;
  }

  private static String key(Class<?> owner) {
    CodeSource source = owner.getProtectionDomain().getCodeSource();
    if (source == null) {
      return "unknown";
    }
    File jar = new File(source.getLocation().getPath());
    String identity = jar.getAbsolutePath() + "\0" + jar.length() + "\0" + jar.lastModified();
    return jar.getName().replaceAll("[^A-Za-z0-9._-]", "_") + "-" + Integer.toHexString(identity.hashCode());
  }

  static Path cacheDirectory() {
    String configured = System.getProperty("lancens.native.dir");
    if (configured != null && !configured.isEmpty()) {
      return Paths.get(configured);
    }
    String xdg = System.getenv("XDG_CACHE_HOME");
    Path root = xdg != null && !xdg.isEmpty() ? Paths.get(xdg) : Paths.get(System.getProperty("user.home"), ".cache");
    return root.resolve("dbt-lancens").resolve("native");
  }
}
