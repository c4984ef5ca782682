//! Task Master's tool descriptions and input schemas, as its server lists them.

/// Task Master's tool descriptions and input schemas, as its server lists them.
pub(super) static LISTED: &super::super::helpers::Listed = &[
(
    "get_tasks",
    "Get all tasks from Task Master, optionally filtering by status and including subtasks.",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"status":{"description":"Filter tasks by status (e.g., 'pending', 'done') or multiple statuses separated by commas (e.g., 'blocked,deferred')","type":"string"},"withSubtasks":{"description":"Include subtasks nested within their parent tasks in the response","type":"boolean"},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["projectRoot"]}"#,
),
(
    "get_task",
    "Get detailed information about a specific task",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","minLength":1,"description":"Task ID(s) to get (can be comma-separated for multiple tasks)"},"status":{"description":"Filter subtasks by status (e.g., 'pending', 'done')","type":"string"},"projectRoot":{"type":"string","description":"Absolute path to the project root directory (Optional, usually from session)"},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["id","projectRoot"]}"#,
),
(
    "next_task",
    "Find the next task to work on based on dependencies and status",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"file":{"description":"Absolute path to the tasks file","type":"string"},"complexityReport":{"description":"Path to the complexity report file (relative to project root or absolute)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["projectRoot"]}"#,
),
(
    "set_task_status",
    "Set the status of one or more tasks or subtasks.",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","minLength":1,"description":"Task ID or subtask ID (e.g., '15', '15.2'). Can be comma-separated to update multiple tasks/subtasks at once."},"status":{"type":"string","enum":["pending","in-progress","done","deferred","cancelled","blocked","review"],"description":"New status to set (e.g., 'pending', 'done', 'in-progress', 'review', 'deferred', 'cancelled')."},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Optional tag context to operate on","type":"string"}},"required":["id","status","projectRoot"]}"#,
),
(
    "add_task",
    "Add a new task using AI",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"prompt":{"description":"Description of the task to add (required if not using manual fields)","type":"string"},"title":{"description":"Task title (for manual task creation)","type":"string"},"description":{"description":"Task description (for manual task creation)","type":"string"},"details":{"description":"Implementation details (for manual task creation)","type":"string"},"testStrategy":{"description":"Test strategy (for manual task creation)","type":"string"},"dependencies":{"description":"Comma-separated list of task IDs this task depends on","type":"string"},"priority":{"description":"Task priority (high, medium, low)","type":"string"},"file":{"description":"Path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"},"research":{"description":"Whether to use research capabilities for task creation","type":"boolean"}},"required":["projectRoot"]}"#,
),
(
    "add_subtask",
    "Add a subtask to an existing task",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","description":"Parent task ID (required)"},"taskId":{"description":"Existing task ID to convert to subtask","type":"string"},"title":{"description":"Title for the new subtask (when creating a new subtask)","type":"string"},"description":{"description":"Description for the new subtask","type":"string"},"details":{"description":"Implementation details for the new subtask","type":"string"},"status":{"description":"Status for the new subtask (default: 'pending')","type":"string"},"dependencies":{"description":"Comma-separated list of dependency IDs for the new subtask","type":"string"},"file":{"description":"Absolute path to the tasks file (default: tasks/tasks.json)","type":"string"},"skipGenerate":{"description":"Skip regenerating task files","type":"boolean"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["id","projectRoot"]}"#,
),
(
    "update_subtask",
    "Appends timestamped information to a specific subtask without replacing existing content. If you just want to update the subtask status, use set_task_status instead.",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","description":"ID of the subtask to update in format \"parentId.subtaskId\" (e.g., \"5.2\"). Parent ID is the ID of the task that contains the subtask."},"prompt":{"description":"Information to add to the subtask. Required unless only updating metadata.","type":"string"},"research":{"description":"Use Perplexity AI for research-backed updates","type":"boolean"},"metadata":{"description":"JSON string of metadata to merge into subtask metadata. Example: '{\"ticketId\": \"JIRA-456\", \"reviewed\": true}'. Requires TASK_MASTER_ALLOW_METADATA_UPDATES=true in MCP environment.","type":"string"},"file":{"description":"Absolute path to the tasks file","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["id","projectRoot"]}"#,
),
(
    "remove_task",
    "Remove a task or subtask permanently from the tasks list",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","description":"ID of the task or subtask to remove (e.g., '5' or '5.2'). Can be comma-separated to update multiple tasks/subtasks at once."},"file":{"description":"Absolute path to the tasks file","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"confirm":{"description":"Whether to skip confirmation prompt (default: false)","type":"boolean"},"tag":{"description":"Specify which tag context to operate on. Defaults to the current active tag.","type":"string"}},"required":["id","projectRoot"]}"#,
),
(
    "add_dependency",
    "Add a dependency relationship between two tasks",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","description":"ID of task that will depend on another task"},"dependsOn":{"type":"string","description":"ID of task that will become a dependency"},"file":{"description":"Absolute path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["id","dependsOn","projectRoot"]}"#,
),
(
    "remove_dependency",
    "Remove a dependency from a task",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","description":"Task ID to remove dependency from"},"dependsOn":{"type":"string","description":"Task ID to remove as a dependency"},"file":{"description":"Absolute path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["id","dependsOn","projectRoot"]}"#,
),
(
    "validate_dependencies",
    "Check tasks for dependency issues (like circular references or links to non-existent tasks) without making changes.",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"file":{"description":"Absolute path to the tasks file","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["projectRoot"]}"#,
),
(
    "fix_dependencies",
    "Fix invalid dependencies in tasks automatically",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"file":{"description":"Absolute path to the tasks file","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["projectRoot"]}"#,
),
(
    "list_tags",
    "List all available tags with task counts and metadata",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"showMetadata":{"description":"Whether to include metadata in the output (default: false)","type":"boolean"},"file":{"description":"Path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."}},"required":["projectRoot"]}"#,
),
(
    "add_tag",
    "Create a new tag for organizing tasks in different contexts",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"name":{"type":"string","description":"Name of the new tag to create"},"copyFromCurrent":{"description":"Whether to copy tasks from the current tag (default: false)","type":"boolean"},"copyFromTag":{"description":"Specific tag to copy tasks from","type":"string"},"fromBranch":{"description":"Create tag name from current git branch (ignores name parameter)","type":"boolean"},"description":{"description":"Optional description for the tag","type":"string"},"file":{"description":"Path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."}},"required":["name","projectRoot"]}"#,
),
(
    "delete_tag",
    "Delete an existing tag and all its tasks",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"name":{"type":"string","description":"Name of the tag to delete"},"yes":{"description":"Skip confirmation prompts (default: true for MCP)","type":"boolean"},"file":{"description":"Path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."}},"required":["name","projectRoot"]}"#,
),
(
    "use_tag",
    "Switch to a different tag context for task operations",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"name":{"type":"string","description":"Name of the tag to switch to"},"file":{"description":"Path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."}},"required":["name","projectRoot"]}"#,
),
(
    "rename_tag",
    "Rename an existing tag",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"oldName":{"type":"string","description":"Current name of the tag to rename"},"newName":{"type":"string","description":"New name for the tag"},"file":{"description":"Path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."}},"required":["oldName","newName","projectRoot"]}"#,
),
(
    "copy_tag",
    "Copy an existing tag to create a new tag with all tasks and metadata",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"sourceName":{"type":"string","description":"Name of the source tag to copy from"},"targetName":{"type":"string","description":"Name of the new tag to create"},"description":{"description":"Optional description for the new tag","type":"string"},"file":{"description":"Path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."}},"required":["sourceName","targetName","projectRoot"]}"#,
),
(
    "parse_prd",
    "Parse a Product Requirements Document (PRD) text file to automatically generate initial tasks. Reinitializing the project is not necessary to run this tool. It is recommended to run parse-prd after initializing the project and creating/importing a prd.txt file in the project root's .taskmaster/docs directory.",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"input":{"default":".taskmaster/docs/prd.txt","description":"Absolute path to the PRD document file (.txt, .md, etc.)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"},"output":{"description":"Output path for tasks.json file (default: .taskmaster/tasks/tasks.json)","type":"string"},"numTasks":{"description":"Approximate number of top-level tasks to generate (default: 10). As the agent, if you have enough information, ensure to enter a number of tasks that would logically scale with project complexity. Setting to 0 will allow Taskmaster to determine the appropriate number of tasks based on the complexity of the PRD. Avoid entering numbers above 50 due to context window limitations.","type":"string"},"force":{"default":false,"description":"Overwrite existing output file without prompting.","type":"boolean"},"research":{"description":"Enable Taskmaster to use the research role for potentially more informed task generation. Requires appropriate API key.","type":"boolean"},"append":{"description":"Append generated tasks to existing file.","type":"boolean"}},"required":["projectRoot"]}"#,
),
(
    "expand_task",
    "Expand a task into subtasks for detailed implementation",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","description":"ID of task to expand"},"num":{"description":"Number of subtasks to generate","type":"string"},"research":{"default":false,"description":"Use research role for generation","type":"boolean"},"prompt":{"description":"Additional context for subtask generation","type":"string"},"file":{"description":"Path to the tasks file relative to project root (e.g., tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"force":{"default":false,"description":"Force expansion even if subtasks exist","type":"boolean"},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["id","projectRoot"]}"#,
),
(
    "expand_all",
    "Expand all pending tasks into subtasks based on complexity or defaults",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"num":{"description":"Target number of subtasks per task (uses complexity/defaults otherwise)","type":"string"},"research":{"description":"Enable research-backed subtask generation (e.g., using Perplexity)","type":"boolean"},"prompt":{"description":"Additional context to guide subtask generation for all tasks","type":"string"},"force":{"description":"Force regeneration of subtasks for tasks that already have them","type":"boolean"},"file":{"description":"Absolute path to the tasks file in the /tasks folder inside the project root (default: tasks/tasks.json)","type":"string"},"projectRoot":{"description":"Absolute path to the project root directory (derived from session if possible)","type":"string"},"tag":{"description":"Tag context to operate on","type":"string"}}}"#,
),
(
    "analyze_project_complexity",
    "Analyze task complexity and generate expansion recommendations.",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"threshold":{"default":5,"description":"Complexity score threshold (1-10) to recommend expansion.","type":"integer","minimum":1,"maximum":10},"research":{"default":false,"description":"Use Perplexity AI for research-backed analysis.","type":"boolean"},"output":{"description":"Output file path relative to project root (default: .taskmaster/reports/task-complexity-report.json).","type":"string"},"file":{"description":"Path to the tasks file relative to project root (default: tasks/tasks.json).","type":"string"},"ids":{"description":"Comma-separated list of task IDs to analyze specifically (e.g., \"1,3,5\").","type":"string"},"from":{"description":"Starting task ID in a range to analyze.","type":"integer","exclusiveMinimum":0,"maximum":9007199254740991},"to":{"description":"Ending task ID in a range to analyze.","type":"integer","exclusiveMinimum":0,"maximum":9007199254740991},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["projectRoot"]}"#,
),
(
    "update",
    "Update multiple upcoming tasks (with ID >= 'from' ID) based on new context or changes provided in the prompt. Use 'update_task' instead for a single specific task or 'update_subtask' for subtasks.",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"from":{"type":"string","description":"Task ID from which to start updating (inclusive). IMPORTANT: This tool uses 'from', not 'id'"},"prompt":{"type":"string","description":"Explanation of changes or new context to apply"},"research":{"description":"Use Perplexity AI for research-backed updates","type":"boolean"},"file":{"description":"Path to the tasks file relative to project root","type":"string"},"projectRoot":{"description":"The directory of the project. (Optional, usually from session)","type":"string"},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["from","prompt"]}"#,
),
(
    "update_task",
    "Updates a single task by ID with new information or context provided in the prompt.",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","description":"ID of the task (e.g., '15') to update. Subtasks are supported using the update-subtask tool."},"prompt":{"description":"New information or context to incorporate into the task. Required unless only updating metadata.","type":"string"},"research":{"description":"Use Perplexity AI for research-backed updates","type":"boolean"},"append":{"description":"Append timestamped information to task details instead of full update","type":"boolean"},"metadata":{"description":"JSON string of metadata to merge into task metadata. Example: '{\"githubIssue\": 42, \"sprint\": \"Q1-S3\"}'. Requires TASK_MASTER_ALLOW_METADATA_UPDATES=true in MCP environment.","type":"string"},"file":{"description":"Absolute path to the tasks file","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["id","projectRoot"]}"#,
),
(
    "scope_up_task",
    "Increase the complexity of one or more tasks using AI",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","description":"Comma-separated list of task IDs to scope up (e.g., \"1,3,5\")"},"strength":{"description":"Strength level: light, regular, or heavy (default: regular)","type":"string"},"prompt":{"description":"Custom prompt for specific scoping adjustments","type":"string"},"file":{"description":"Path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"},"research":{"description":"Whether to use research capabilities for scoping","type":"boolean"}},"required":["id","projectRoot"]}"#,
),
(
    "scope_down_task",
    "Decrease the complexity of one or more tasks using AI",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","description":"Comma-separated list of task IDs to scope down (e.g., \"1,3,5\")"},"strength":{"description":"Strength level: light, regular, or heavy (default: regular)","type":"string"},"prompt":{"description":"Custom prompt for specific scoping adjustments","type":"string"},"file":{"description":"Path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"},"research":{"description":"Whether to use research capabilities for scoping","type":"boolean"}},"required":["id","projectRoot"]}"#,
),
(
    "research",
    "Perform AI-powered research queries with project context",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"query":{"type":"string","description":"Research query/prompt (required)"},"taskIds":{"description":"Comma-separated list of task/subtask IDs for context (e.g., \"15,16.2,17\")","type":"string"},"filePaths":{"description":"Comma-separated list of file paths for context (e.g., \"src/api.js,docs/readme.md\")","type":"string"},"customContext":{"description":"Additional custom context text to include in the research","type":"string"},"includeProjectTree":{"description":"Include project file tree structure in context (default: false)","type":"boolean"},"detailLevel":{"description":"Detail level for the research response (default: medium)","type":"string","enum":["low","medium","high"]},"saveTo":{"description":"Automatically save research results to specified task/subtask ID (e.g., \"15\" or \"15.2\")","type":"string"},"saveToFile":{"description":"Save research results to .taskmaster/docs/research/ directory (default: false)","type":"boolean"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["query","projectRoot"]}"#,
),
];
