package icebergmeta

import (
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Snapshot summary keys (Iceberg spec, "Optional Snapshot Summary Fields";
// the names Java's SnapshotSummary and iceberg-go write). iceberg-go keeps
// its summary collector private, so commits compute them here.
const (
	summaryAddedDataFiles        = "added-data-files"
	summaryAddedRecords          = "added-records"
	summaryAddedFilesSize        = "added-files-size"
	summaryDeletedDataFiles      = "deleted-data-files"
	summaryDeletedRecords        = "deleted-records"
	summaryRemovedFilesSize      = "removed-files-size"
	summaryChangedPartitionCount = "changed-partition-count"
	summaryTotalDataFiles        = "total-data-files"
	summaryTotalDeleteFiles      = "total-delete-files"
	summaryTotalRecords          = "total-records"
	summaryTotalFilesSize        = "total-files-size"
	summaryTotalPositionDeletes  = "total-position-deletes"
	summaryTotalEqualityDeletes  = "total-equality-deletes"
)

// fileChanges counts the data files a commit adds and removes: what its
// snapshot summary reports.
type fileChanges struct {
	addedFiles, addedRecords, addedSize       int64 // sizes in bytes
	deletedFiles, deletedRecords, deletedSize int64
	partitions                                map[int32]struct{} // Kafka partitions of the files
}

// add counts f as added.
func (c *fileChanges) add(f AddedFile) {
	c.addedFiles++
	c.addedRecords += f.Stats.RecordCount
	c.addedSize += f.FileSize
	c.partition(f.Partition)
}

// remove counts df, a data file of the parent snapshot, as removed.
func (c *fileChanges) remove(df iceberg.DataFile) {
	c.deletedFiles++
	c.deletedRecords += df.Count()
	c.deletedSize += df.FileSizeBytes()
	if p, ok := df.Partition()[PartitionFieldID].(int32); ok {
		c.partition(p)
	}
}

func (c *fileChanges) partition(p int32) {
	if c.partitions == nil {
		c.partitions = make(map[int32]struct{})
	}
	c.partitions[p] = struct{}{}
}

// summary is the summary of a snapshot of operation op that makes c on a
// parent whose summary properties are previous (nil for the first
// snapshot), with extra (the caller's own properties) set over it.
//
// It carries added-data-files, added-records and added-files-size when c
// adds files; deleted-data-files, deleted-records and removed-files-size
// when it removes some; changed-partition-count; and the totals
// (total-data-files, total-records, total-files-size, total-delete-files,
// total-position-deletes, total-equality-deletes): the parent's plus the
// added minus the removed, a total the parent lacks counting from zero as
// in iceberg-go. A commit that removes files keeps the totals at zero or
// above, so a parent whose totals undercount does not make them negative.
func (c *fileChanges) summary(op table.Operation, previous iceberg.Properties, extra map[string]string) table.Summary {
	props := iceberg.Properties{
		summaryChangedPartitionCount: strconv.Itoa(len(c.partitions)),
	}
	if c.addedFiles > 0 {
		props[summaryAddedDataFiles] = strconv.FormatInt(c.addedFiles, 10)
		props[summaryAddedRecords] = strconv.FormatInt(c.addedRecords, 10)
		props[summaryAddedFilesSize] = strconv.FormatInt(c.addedSize, 10)
	}
	if c.deletedFiles > 0 {
		props[summaryDeletedDataFiles] = strconv.FormatInt(c.deletedFiles, 10)
		props[summaryDeletedRecords] = strconv.FormatInt(c.deletedRecords, 10)
		props[summaryRemovedFilesSize] = strconv.FormatInt(c.deletedSize, 10)
	}
	total := func(key string, delta int64) {
		v := previous.GetInt64(key, 0) + delta
		if c.deletedFiles > 0 {
			v = max(v, 0)
		}
		props[key] = strconv.FormatInt(v, 10)
	}
	total(summaryTotalDataFiles, c.addedFiles-c.deletedFiles)
	total(summaryTotalRecords, c.addedRecords-c.deletedRecords)
	total(summaryTotalFilesSize, c.addedSize-c.deletedSize)
	total(summaryTotalDeleteFiles, 0)
	total(summaryTotalPositionDeletes, 0)
	total(summaryTotalEqualityDeletes, 0)
	for k, v := range extra {
		props[k] = v
	}
	return table.Summary{Operation: op, Properties: props}
}

// parentSummary is the summary properties of parent (nil for none).
func parentSummary(parent *table.Snapshot) iceberg.Properties {
	if parent == nil || parent.Summary == nil {
		return nil
	}
	return parent.Summary.Properties
}
