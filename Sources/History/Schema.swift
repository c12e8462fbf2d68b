import GRDB

// MARK: - The schema

extension AppDatabase {
    /// Every migration the history has had, in order: a database of any earlier version is
    /// brought up to date at open.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        // Shipped migrations are never edited; add new ones below.
        migrator.registerMigration("v1: sessions and turns") { db in
            try db.create(table: "sessions") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("started_at", .datetime).notNull()
                t.column("ended_at", .datetime)
                t.column("speaker_a", .text).notNull()
                t.column("speaker_b", .text).notNull()
            }
            try db.create(table: "turns") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("session_id", .integer).notNull().indexed()
                    .references("sessions", onDelete: .cascade)
                t.column("speaker", .text).notNull()
                t.column("source_lang", .text).notNull()
                t.column("target_lang", .text).notNull()
                t.column("source_text", .text).notNull()
                t.column("translated_text", .text)
                t.column("ipa", .text)
                t.column("confidence", .double)
                t.column("status", .text).notNull()
                t.column("error", .text)
                t.column("favorite", .boolean).notNull().defaults(to: false)
                t.column("created_at", .datetime).notNull().indexed()
                t.column("asr_ms", .integer)
                t.column("mt_ms", .integer)
                t.column("tts_ms", .integer)
                t.column("response_ms", .integer)
            }
        }
        migrator.registerMigration("v2: low-confidence flag") { db in
            try db.alter(table: "turns") { t in
                t.add(column: "low_confidence", .boolean).notNull().defaults(to: false)
            }
        }
        migrator.registerMigration("v3: full-text search") { db in
            // External content: the index holds only tokens; triggers keep it in step with turns.
            // unicode61 with remove_diacritics 2 folds case and accents: "cafe" finds "café".
            try db.execute(
                sql: """
                    CREATE VIRTUAL TABLE turns_fts USING fts5(
                        source_text, translated_text, content='turns', content_rowid='id',
                        tokenize='unicode61 remove_diacritics 2');
                    CREATE TRIGGER turns_fts_after_insert AFTER INSERT ON turns BEGIN
                        INSERT INTO turns_fts(rowid, source_text, translated_text)
                        VALUES (new.id, new.source_text, new.translated_text);
                    END;
                    CREATE TRIGGER turns_fts_after_delete AFTER DELETE ON turns BEGIN
                        INSERT INTO turns_fts(turns_fts, rowid, source_text, translated_text)
                        VALUES ('delete', old.id, old.source_text, old.translated_text);
                    END;
                    CREATE TRIGGER turns_fts_after_update AFTER UPDATE OF source_text, translated_text ON turns BEGIN
                        INSERT INTO turns_fts(turns_fts, rowid, source_text, translated_text)
                        VALUES ('delete', old.id, old.source_text, old.translated_text);
                        INSERT INTO turns_fts(rowid, source_text, translated_text)
                        VALUES (new.id, new.source_text, new.translated_text);
                    END;
                    INSERT INTO turns_fts(turns_fts) VALUES ('rebuild');
                    CREATE INDEX turns_on_favorite ON turns(favorite, created_at);
                    """)
        }
        migrator.registerMigration("v4: how auto mode told the speaker") { db in
            try db.alter(table: "turns") { t in
                t.add(column: "detection", .text)
            }
        }
        migrator.registerMigration("v5: word confidence") { db in
            try db.alter(table: "turns") { t in
                t.add(column: "word_confidence", .text)
            }
        }
        migrator.registerMigration("v6: how the turn ended") { db in
            try db.alter(table: "turns") { t in
                t.add(column: "pause_ms", .integer)
                t.add(column: "ended_by", .text)
            }
        }
        migrator.registerMigration("v7: speculation") { db in
            try db.alter(table: "turns") { t in
                t.add(column: "speculated", .boolean)
            }
        }
        migrator.registerMigration("v8: which engine heard the turn") { db in
            try db.alter(table: "turns") { t in
                t.add(column: "engine", .text)
                t.add(column: "streaming_text", .text)
            }
        }
        migrator.registerMigration("v9: the translation's route") { db in
            try db.alter(table: "turns") { t in
                t.add(column: "route", .text)
            }
        }
        return migrator
    }
}
