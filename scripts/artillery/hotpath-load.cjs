// Hot Path's load, as Artillery runs it: the functions an exported script names (`workshop export-load`
// writes this file beside it). Artillery has no loop bounded by time, and its figures cover the whole run:
// this keeps a clock per worker process and records each answer under the phase it arrived in
// (`hotpath.<phase>.codes.<status>`, `hotpath.response_time.<phase>`), as the workshop counts the answers
// that arrive within a phase's window. Answers after the last phase are recorded under "after".
'use strict';

const AFTER = 'after';

/** When this worker's load began (ms since the epoch): its first user's arrival, less hotpathLeadMs. */
let start;
/** [{ name, until }], until in ms from `start`, parsed once from hotpathSchedule. */
let schedule;

/** "warm-up=2; measured=5" into [{ name: 'warm-up', until: 2000 }, { name: 'measured', until: 7000 }]. */
function scheduleOf(text) {
  let until = 0;
  return String(text)
    .split(';')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const at = part.lastIndexOf('=');
      until += Number(part.slice(at + 1)) * 1000;
      return { name: part.slice(0, at).trim(), until };
    });
}

function phaseNow() {
  const since = Date.now() - start;
  const phase = schedule.find((p) => since < p.until);
  return phase ? phase.name : AFTER;
}

/**
 * First step of every flow: starts the worker's clock at its first arrival. Artillery's first arrival
 * comes one interval after its phases begin (hotpathLeadMs), which the clock takes off.
 */
function hotpathStart(context, _events, done) {
  if (start === undefined) {
    start = Date.now() - Number(context.vars.hotpathLeadMs || 0);
    schedule = scheduleOf(context.vars.hotpathSchedule);
  }
  return done();
}

/** `whileTrue` of the closed model's loop (checked after each answer): until the last phase ends. */
function hotpathRunning(_context, next) {
  return next(phaseNow() !== AFTER);
}

/** Scenario-level afterResponse: the answer's status and time, under the phase it arrived in. */
function hotpathRecord(_req, res, _context, events, done) {
  const phase = phaseNow();
  events.emit('counter', `hotpath.${phase}.codes.${res.statusCode}`, 1);
  // To the last byte, as autocannon measures (got's timings, whole milliseconds).
  const phases = res.timings && res.timings.phases;
  if (phases) events.emit('histogram', `hotpath.response_time.${phase}`, phases.total ?? phases.firstByte);
  return done();
}

/** Scenario-level onError: a request without an answer (ETIMEDOUT, ECONNREFUSED ...). */
function hotpathError(err, _req, _context, events, done) {
  events.emit('counter', `hotpath.${phaseNow()}.errors.${err.code || err.name}`, 1);
  return done();
}

/** Ids unique across the run's workers: a random prefix of this worker's own, then a count. */
const idPrefix = require('node:crypto').randomBytes(4).toString('hex');
let lastId = 0;

/** Request-level beforeRequest: a new id where the path says [<id>] (autocannon's placeholder, as `-I` fills it). */
function hotpathRequestId(requestParams, _context, _events, next) {
  const id = `${idPrefix}${(++lastId).toString(36)}`;
  requestParams.url = String(requestParams.url).split('[<id>]').join(id).split('[%3Cid%3E]').join(id).split('%5B%3Cid%3E%5D').join(id);
  return next();
}

module.exports = { hotpathStart, hotpathRunning, hotpathRecord, hotpathError, hotpathRequestId };
