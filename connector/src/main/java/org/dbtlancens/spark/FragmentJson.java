package org.dbtlancens.spark;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.lance.FragmentMetadata;
import org.lance.fragment.DataFile;

/**
 * A new fragment's metadata as the JSON pylance reads ({@code lance.FragmentMetadata.from_json}),
 * which is how the fragments lance-core wrote in a task reach the commit in the dbt process.
 *
 * <p>Only what a freshly written fragment has: its data files, no deletion file and no row id
 * metadata (a table with stable row ids assigns them at commit; a fragment arriving with any is
 * refused rather than half-carried over).
 */
final class FragmentJson {
  private static final ObjectMapper JSON = new ObjectMapper();

  private FragmentJson() {}

  static String of(FragmentMetadata fragment) {
    if (fragment.getDeletionFile() != null || fragment.getRowIdMeta() != null) {
      throw new IllegalStateException(
          "lance-core wrote fragment " + fragment.getId() + " with a deletion file or row ids: not a new fragment");
    }
    ObjectNode node = JSON.createObjectNode();
    node.put("id", fragment.getId());
    ArrayNode files = node.putArray("files");
    for (DataFile file : fragment.getFiles()) {
      ObjectNode entry = files.addObject();
      entry.put("path", file.getPath());
      ArrayNode fields = entry.putArray("fields");
      for (int field : file.getFields()) {
        fields.add(field);
      }
      ArrayNode indices = entry.putArray("column_indices");
      for (int index : file.getColumnIndices()) {
        indices.add(index);
      }
      entry.put("file_major_version", file.getFileMajorVersion());
      entry.put("file_minor_version", file.getFileMinorVersion());
      if (file.getFileSizeBytes() == null) {
        entry.putNull("file_size_bytes");
      } else {
        entry.put("file_size_bytes", file.getFileSizeBytes());
      }
      if (file.getBaseId().isPresent()) {
        entry.put("base_id", file.getBaseId().get());
      } else {
        entry.putNull("base_id");
      }
    }
    node.put("physical_rows", fragment.getPhysicalRows());
    node.putNull("deletion_file");
    node.putNull("row_id_meta");
    try {
      return JSON.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialise fragment " + fragment.getId(), e);
    }
  }
}
