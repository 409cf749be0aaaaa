// TypeBox of the reports (P1-P3, contract section 16): the query every report takes and the two
// JSON reports. Durations are seconds (fractions allowed); a figure without data is null.
import { Type, type Static } from 'typebox';
import { errorResponses, nullable, RowId, SERVICE_ERRORS } from '../http/schemas.ts';

const Day = (description: string) => Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description });

export const ReportQuery = Type.Object({
  location_id: RowId,
  from: Day("the first day of the range (inclusive), YYYY-MM-DD, in the location's time zone (UTC without one)"),
  to: Day('the last day of the range (inclusive), YYYY-MM-DD'),
});
export type ReportQuery = Static<typeof ReportQuery>;

const Seconds = nullable(Type.Number());
export const Durations = Type.Object(
  {
    median_s: Seconds,
    p90_s: Seconds,
  },
  { title: 'Durations', description: 'seconds from the creation; null when no row of the range has the step' },
);

const Group = Type.Object({
  key: Type.String(),
  name: nullable(Type.String()),
  requests: Type.Integer(),
});

export const CfhReport = Type.Object(
  {
    location_id: Type.Integer(),
    from: Type.String(),
    to: Type.String(),
    total: Type.Integer(),
    per_day: Type.Array(Type.Object({ day: Type.String(), requests: Type.Integer(), escalations: Type.Integer(), timeouts: Type.Integer() })),
    by_source: Type.Array(Group),
    by_option: Type.Array(Group),
    by_device: Type.Array(Group),
    time_to_claim: Durations,
    time_to_on_the_way: Durations,
    time_to_complete: Durations,
    outcomes: Type.Array(Type.Object({ key: Type.String(), count: Type.Integer() })),
    by_employee: Type.Array(
      Type.Object({
        claimed_by: Type.String({ description: "a person's current name, or the name an integration sent" }),
        person_id: Type.Optional(Type.Integer({ description: 'the person (section 17), when a person claimed: one entry whatever their name was then' })),
        claimed: Type.Integer(),
        completed: Type.Integer(),
      }),
    ),
  },
  { title: 'CfhReport' },
);
export type CfhReport = Static<typeof CfhReport>;

export const LockerReport = Type.Object(
  {
    location_id: Type.Integer(),
    from: Type.String(),
    to: Type.String(),
    per_day: Type.Array(
      Type.Object({ day: Type.String(), orders: Type.Integer(), completed: Type.Integer(), expired: Type.Integer(), canceled: Type.Integer() }),
    ),
    time_to_ready: Durations,
    time_to_pickup: Durations,
    occupancy: nullable(
      Type.Number({
        description:
          "time-weighted average fraction (0 to 1) of the location's cabinets holding an order over the range up to now; null for a range wholly in the future or a location without cabinets",
      }),
    ),
  },
  { title: 'LockerReport' },
);
export type LockerReport = Static<typeof LockerReport>;

export const REPORT_ERRORS = {
  ...errorResponses({
    ...SERVICE_ERRORS,
    429: {
      description: 'too many refused requests from this client, or more than 2 reports at once from this credential; see Retry-After',
      codes: ['too_many_failures', 'too_many_reports'],
    },
    503: 'the database is unavailable, or a report is running on the instance and did not end within 2 s; see Retry-After',
    401: 'missing or invalid bearer token',
    403: 'the token lacks the reports scope',
    404: 'no such location (for this token)',
    422: 'a missing or unparseable date, or from after to',
  }),
};
