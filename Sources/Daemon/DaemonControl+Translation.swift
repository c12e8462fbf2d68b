import Foundation
import Logging
import ParleyConfig
import ParleyControl
import ParleyCore
import ParleyHistory
import ParleyProtocol
import ParleyRecognition
import ParleyRuntime
import ParleySynthesis
import ParleyTranslation

// MARK: - retry, languages

extension DaemonControl {
    /// `retry {id}`: translates a stored untranslated turn again and records the outcome. The
    /// new translation is published (`translation`, `turn_updated`) but not spoken: the
    /// conversation has moved on, and a late sentence out of the speaker would cut into it.
    func retry(_ reference: TurnReference) async throws -> TurnInfo {
        let id = reference.id
        let translator = interpreter.translator
        guard let turn = try await history.turn(id: id) else {
            throw FieldRefusal("there is no turn \(id) in history; see `parley history` for ids")
        }
        guard turn.status == .untranslated else {
            throw FieldRefusal("turn \(id) is already translated; only untranslated turns are retried")
        }
        let started = interpreter.clock.now
        let outcome: Result<String, any Error>
        do {
            // Asked for by someone: backends the conversation skips since they failed are asked too.
            let text = try await translator.retranslate(turn.sourceText, from: turn.sourceLang, to: turn.targetLang)
            outcome = text.isEmpty ? .failure(TranslationError("the translation came back empty")) : .success(text)
        } catch {
            outcome = .failure(error)
        }
        let mtMs = interpreter.clock.milliseconds(since: started)
        switch outcome {
        case .success(let text):
            guard let updated = try await history.recordRetry(id: id, translation: text, error: nil, mtMs: mtMs) else {
                throw FieldRefusal("turn \(id) was deleted meanwhile")
            }
            logger.info("retried turn translated", metadata: ["id": "\(id)"])
            events.publish(EventType.translation, TextEvent(speaker: turn.speaker.rawValue, language: turn.targetLang, text: text))
            events.publish(EventType.turnUpdated, updated.info)
            return updated.info
        case .failure(let error):
            let updated = try await history.recordRetry(id: id, translation: nil, error: "\(error)", mtMs: mtMs)
            if let updated { events.publish(EventType.turnUpdated, updated.info) }
            throw RetryFailure(description: "turn \(id) is still untranslated: \(error)")
        }
    }

    /// `languages`: for every language Parley knows offline, a speaker uses, a backend
    /// translates or a country suggests (`LanguageTable`): whether it can be heard (by which
    /// engine) and spoken (by which voice), the pairs to and from it with their backends, what
    /// it lacks; and for each direction between the offline languages and those in use, the
    /// route its turns take or what to install.
    func languages() async -> LanguagesInfo {
        var routes: [LanguagePair: [String]] = [:]
        var backends: [LanguagesInfo.Backend] = []
        for backend in interpreter.translator.backends {
            do {
                for pair in try await backend.translator.availablePairs() {
                    routes[pair, default: []].append(backend.name)
                }
                backends.append(.init(name: backend.name, available: true))
            } catch {
                backends.append(.init(name: backend.name, available: false, error: "\(error)"))
            }
        }
        let settings = interpreter.snapshot.settings
        let inUse = [settings.speakerA, settings.speakerB]
        let matrix = LanguageTable.offline.map(\.code) + inUse.filter { LanguageTable.info($0) == nil }
        var codes = Set(matrix).union(LanguageTable.countries.values.joined())
        for pair in routes.keys {
            codes.insert(pair.source)
            codes.insert(pair.target)
        }
        let translator = interpreter.translator
        let piper = Daemon.piperVoices(config, report: nil)
        let festival = Daemon.festivalVoices(config, piper: Set(piper.keys), report: nil)
        let languages = codes.sorted().map { code in
            let hearable = interpreter.canHear(code)
            let speakable = interpreter.canSpeak(code)
            let info = LanguageTable.info(code)
            let spokenByPiper = speakable ? piper[code] : nil
            let spokenByFestival = speakable ? festival[code] : nil
            let voice = speakable ? (spokenByPiper?.name ?? spokenByFestival?.name ?? config.voices[code]?.voice ?? info?.voice ?? code) : nil
            let engine = spokenByPiper != nil ? "piper" : spokenByFestival != nil ? "festival" : "espeak-ng"
            var missing: [String] = []
            if !hearable {
                missing.append(
                    whisperLanguages.contains(code)
                        ? "to hear \(code): run `make engines` (Whisper base hears it) and check [transcriber]"
                        : "to hear \(code): \(Daemon.notHearableHint(language: code))")
            }
            if !speakable {
                missing.append("to speak \(code): espeak-ng has no voice for it; set [voice.\(code)] voice to a close one from `espeak-ng --voices`")
            }
            return LanguagesInfo.Language(
                code: code, hearable: hearable, speakable: speakable,
                to: routes.filter { $0.key.source == code }.map { .init(language: $0.key.target, backends: $0.value) }
                    .sorted { $0.language < $1.language },
                from: routes.filter { $0.key.target == code }.map { .init(language: $0.key.source, backends: $0.value) }
                    .sorted { $0.language < $1.language },
                model: config.recognizerModel(for: code).flatMap { $0.firstMissingFile() == nil ? $0.info() : nil }, engine: interpreter.engine(for: code),
                name: LanguageTable.names[code], voice: voice, voiceEngine: speakable ? engine : nil, inUse: inUse.contains(code), missing: missing.isEmpty ? nil : missing)
        }
        var directions: [LanguagesInfo.Direction] = []
        for source in matrix {
            for target in matrix where target != source {
                let pair = LanguagePair(source, target)
                let route = translator.routeName(for: pair)
                let missing = route != nil ? nil : TranslationHints.missingRoute(source: source, target: target) { routes[LanguagePair($0, $1)] != nil }
                directions.append(.init(source: source, target: target, route: route, missing: missing))
            }
        }
        let offline = LanguageTable.offline.map(\.code)
        var packages = Set<String>()
        for source in offline {
            for target in offline where source < target {
                guard routes[LanguagePair(source, target)] == nil, routes[LanguagePair(target, source)] == nil,
                    let package = TranslationHints.debianPackage(source, target)
                else { continue }
                packages.insert(package)
            }
        }
        return LanguagesInfo(languages: languages, backends: backends, directions: directions, missingPackages: packages.sorted())
    }
}

/// A retry that did not translate; the turn stays untranslated with the new error.
struct RetryFailure: Error, CustomStringConvertible {
    let description: String
}
