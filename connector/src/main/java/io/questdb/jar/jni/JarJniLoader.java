package io.questdb.jar.jni;

import org.dbtlancens.spark.NativeLibraryCache;

/**
 * Stands in for jar-jni's loader, which lance-core's {@code JniLoader} calls to load
 * {@code liblance_jni}. jar-jni copies the 181 MB library out of the jar into a new temporary file
 * at every JVM start (2-3 s, and a killed JVM leaves the copy behind); this one extracts it once
 * into a cache directory and loads it from there ({@link NativeLibraryCache}). Only this method of
 * jar-jni is used by lance-core 7, so jar-jni itself is left off the class path.
 */
public interface JarJniLoader {
  static <T> void loadLib(Class<T> cls, String jarPathPrefix, String name) {
    NativeLibraryCache.load(cls, jarPathPrefix, name);
  }
}
