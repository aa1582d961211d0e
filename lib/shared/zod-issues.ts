/** A validation problem reduced to where it is and what is wrong, never the offending value. */
export interface FieldProblem {
  path: string;
  problem: string;
}

/** The part of a zod error (classic or mini) that names problems. */
export interface IssueList {
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>;
}

export function describeIssues(error: IssueList): FieldProblem[] {
  return error.issues.map((issue) => ({
    path: issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)',
    problem: issue.message,
  }));
}

/** `path problem` lines, for messages that list everything wrong at once. */
export function issueLines(error: IssueList): string[] {
  return describeIssues(error).map((p) => `${p.path} ${p.problem}`);
}
