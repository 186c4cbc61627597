import type { en } from './en';

/**
 * Simplified Chinese. Chinese has one plural form, so a plural key has only its `_other`
 * entry; the type requires every other key of the English catalogue and no more.
 */
export const zhCN: Readonly<Record<Exclude<keyof typeof en, `${string}_one`>, string>> = {
  'status.preparing': '准备中',
  'status.running': '运行中',
  'status.ok': '已完成',
  'status.error': '失败',
  'status.denied': '已拒绝',
  'status.interrupted': '已中断',

  'row.toolCall': '工具调用',
  'row.open': '打开',
  'row.inspect': '检查',
  'row.inspectCall': '检查调用 {{callId}}',
  'row.openFile': '打开 {{path}}',
  'row.preparingContent': '正在准备内容 {{size}} KB',
  'row.calls_other': '{{count}} 次调用',
  'row.nestedCalls': '{{title}}发起的调用',

  'generic.input': '输入',
  'generic.output': '输出',
  'generic.progress': '目前的输出',
  'generic.empty': '（空）',

  'denied.autoReview': '自动审查',
  'denied.notRun': '未执行：{{reason}}',
  'denied.fallbackReason': '审查策略不允许此次调用',

  'tool.bash.title': 'Shell',
  'tool.pwsh.title': 'PowerShell',
  'tool.read.title': '读取',
  'tool.read_image.title': '读取图片',
  'tool.write.title': '写入',
  'tool.edit.title': '编辑',
  'tool.str_replace_editor.title': '编辑器',
  'tool.str_replace_editor.view': '查看',
  'tool.str_replace_editor.create': '创建',
  'tool.str_replace_editor.str_replace': '编辑',
  'tool.grep.title': '搜索',
  'tool.glob.title': '查找文件',
  'tool.web_fetch.title': '抓取网页',
  'tool.todo_write.title': '待办',
  'tool.question.title': '提问',
  'tool.run_code.title': '运行代码',
  'tool.skill.title': '技能',

  'shell.exitCode': '退出码 {{code}}',
  'shell.signal': '被 {{signal}} 终止',
  'shell.timedOut': '已超时',
  'shell.noExitCode': '无退出码',
  'shell.background': '后台',
  'shell.command': '命令',
  'shell.folder': '目录',
  'shell.startedInBackground': '已在后台启动',

  'terminal.label': '{{command}} 的输出',
  'terminal.moreLines_other': '… 还有 {{count}} 行',
  'terminal.showAll': '显示全部输出',
  'terminal.showLess': '收起',
  'terminal.copy': '复制输出',
  'terminal.copied': '已复制',
  'terminal.empty': '（无输出）',

  'diff.label': '{{path}} 的改动',
  'diff.stats': '新增 {{added}} 行，删除 {{removed}} 行',
  'diff.coarse': '约写入 {{count}} 行',
  'diff.moreLines_other': '再显示 {{count}} 行',
  'diff.showLess': '收起',
  'diff.newFile': '新文件',

  'excerpt.label': '{{path}} 的内容',
  'excerpt.lines': '第 {{first}}–{{last}} 行，共 {{total}} 行',
  'excerpt.empty': '文件为空',
  'excerpt.cutLines': '超过 2000 个字符的行已截断：{{lines}}',

  'search.files_other': '{{count}} 个文件',
  'search.matches_other': '{{count}} 处匹配',
  'search.moreFiles_other': '再显示 {{count}} 个文件',
  'search.noMatches': '没有匹配',
  'search.truncated': '其余结果已省略',
  'search.label': '{{pattern}} 的搜索结果',

  'web.status': 'HTTP {{status}}',
  'web.bytes': '{{size}} KB',
  'web.truncated': '已按大小上限截断',
  'web.source': '页面源码',
  'web.openPage': '在新标签页中打开 {{url}}',

  'images.label': '图片',
  'images.description': '{{path}}，{{width}} × {{height}}',
  'images.downscaled': '已从 {{width}} × {{height}} 缩小',
  'images.loading': '正在加载图片',
  'images.failed': '无法显示此图片',

  'todo.added': '新增',
  'todo.changed': '原为{{from}}',
  'todo.moved': '已调整顺序',
  'todo.removed': '已移除',
  'todo.unchanged': '未变化',
  'todo.status.pending': '待办',
  'todo.status.in_progress': '进行中',
  'todo.status.completed': '已完成',
  'todo.progress': '已完成 {{completed}}/{{total}}',

  'question.count_other': '{{count}} 个问题',
  'question.notAnswered': '未回答',
  'question.noAnswer': '无回答',
  'question.answer': '回答',

  'runCode.code': '代码',
  'runCode.printed': '打印输出',

  'skill.instructions': '说明',
  'skill.files_other': '技能中还有 {{count}} 个文件',
};
